import type { Argv, CommandModule } from 'yargs';
import { usageError } from '../src/errors/index.js';
import { wholeNumberAtLeast } from '../src/cli/coerce.js';

interface SimArgs {
  workers: number;
  'port-base': number;
  host: string;
  flavor: 'sglang' | 'vllm';
  model: string;
  'dp-size': number;
  'max-running': number;
  'kv-blocks': number;
  'block-size': number;
  speedup: number;
  seed: number;
  json: boolean;
}

const positiveInt = (flag: string): ((v: number) => number) => wholeNumberAtLeast(flag, 1);

const sim: CommandModule<object, SimArgs> = {
  command: 'sim',
  describe: 'Run simulated SGLang/vLLM engines on loopback for any router to use',
  builder: (y: Argv) =>
    y
      .usage('$0 sim [options]\n\nRuns N simulated engines (each its own HTTP port) until SIGINT/SIGTERM.')
      .option('workers', { alias: 'n', type: 'number', default: 4, describe: 'number of engines', coerce: positiveInt('workers') })
      .option('port-base', {
        type: 'number',
        default: 31000,
        describe: 'port of the first engine (the others follow); 0 picks free ports',
        coerce: (v: number) => {
          if (!Number.isInteger(v) || v < 0 || v > 65535) throw usageError(`--port-base must be a port number from 0 to 65535 (got ${String(v)})`);
          return v;
        },
      })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on' })
      .option('flavor', { choices: ['sglang', 'vllm'] as const, default: 'sglang' as const, describe: 'API and metrics to speak' })
      .option('model', { type: 'string', default: 'sim-llama-3.1-8b', describe: 'served model name' })
      .option('dp-size', { type: 'number', default: 1, describe: 'data-parallel ranks per engine', coerce: positiveInt('dp-size') })
      .option('max-running', { type: 'number', default: 32, describe: 'running-batch cap per rank', coerce: positiveInt('max-running') })
      .option('kv-blocks', { type: 'number', default: 8192, describe: 'KV cache blocks per rank', coerce: positiveInt('kv-blocks') })
      .option('block-size', { type: 'number', default: 16, describe: 'tokens per KV block', coerce: positiveInt('block-size') })
      .option('speedup', {
        type: 'number',
        default: 1,
        describe: 'run simulated time this many times faster than real time',
        coerce: (v: number) => {
          if (!Number.isFinite(v) || v <= 0) throw usageError(`--speedup must be a number greater than 0 (got ${String(v)})`);
          return v;
        },
      })
      .option('seed', { type: 'number', default: 42, describe: 'random seed (output lengths, text)', coerce: (v: number) => {
        if (!Number.isInteger(v)) throw usageError(`--seed must be a whole number (got ${String(v)})`);
        return v;
      } })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON object with the URLs' })
      .example('$0 sim --workers 4 --port-base 31000', 'four SGLang-style engines on ports 31000-31003')
      .example('$0 sim -n 2 --port-base 0 --json', 'free ports, machine-readable')
      .example('$0 sim --flavor vllm --dp-size 2 --speedup 10', 'vLLM-style engines with two ranks, 10x faster') as unknown as Argv<SimArgs>,
  handler: async (argv) => {
    const { startSimFleet } = await import('../src/sim/index.js');
    // Handlers first: a supervisor may signal as soon as it reads the URLs.
    const stopped = untilSignal();
    const fleet = await startSimFleet({
      workers: argv.workers,
      host: argv.host,
      portBase: argv['port-base'],
      flavor: argv.flavor,
      model: argv.model,
      dpSize: argv['dp-size'],
      maxRunning: argv['max-running'],
      kvBlocks: argv['kv-blocks'],
      blockSize: argv['block-size'],
      speedup: argv.speedup,
      seed: argv.seed,
    });
    if (argv.json) {
      process.stdout.write(
        `${JSON.stringify({ urls: fleet.urls, flavor: argv.flavor, model: argv.model, dp_size: argv['dp-size'], simulated: true })}\n`,
      );
    } else {
      for (const url of fleet.urls) process.stdout.write(`${url}\n`);
      process.stderr.write(`routerctl sim: ${fleet.urls.length} simulated ${argv.flavor} engines serving ${argv.model}; Ctrl-C to stop\n`);
    }
    await stopped;
    await fleet.close();
  },
};

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

export default sim;
