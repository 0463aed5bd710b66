import type { Argv, CommandModule } from 'yargs';
import { usageError } from '../src/errors/index.js';
import { StopSignals, numberGreaterThan, portNumber, wholeNumber, wholeNumberAtLeast, wholeNumberAtLeastOrOff } from '../src/cli/index.js';
import { DEFAULT_ENGINE_PARAMS, SCHEDULE_POLICIES, SGLANG_SCHEDULER_DEFAULTS, VLLM_SCHEDULER_DEFAULTS } from '../src/sim/index.js';
import type { EngineParams, SchedulePolicy } from '../src/sim/index.js';

interface SimArgs {
  workers: number;
  'port-base': number;
  host: string;
  flavor: 'sglang' | 'vllm';
  model: string;
  'dp-size': number;
  'max-running': number;
  'kv-blocks': number | undefined;
  'max-total-tokens': number | undefined;
  'block-size': number;
  'schedule-policy': SchedulePolicy;
  'max-prefill-tokens': number | undefined;
  'chunked-prefill-size': number | undefined;
  'max-num-batched-tokens': number | undefined;
  'long-prefill-token-threshold': number | undefined;
  speedup: number;
  seed: number;
  'kv-events': boolean;
  'kv-events-format': 'array' | 'map';
  'kv-events-topic': string;
  'kv-events-port': number | undefined;
  'kv-events-buffer': number | undefined;
  'load-publish': boolean;
  'as-sglang': boolean;
  tokenizer: string | undefined;
  json: boolean;
}

/** Flags that only one flavour's scheduler reads; given to the other they would silently do nothing. */
const FLAVOUR_FLAGS: ReadonlyArray<[flag: keyof SimArgs, flavor: 'sglang' | 'vllm', instead: string]> = [
  ['max-prefill-tokens', 'sglang', '--max-num-batched-tokens'],
  ['chunked-prefill-size', 'sglang', '--max-num-batched-tokens or --long-prefill-token-threshold'],
  ['max-num-batched-tokens', 'vllm', '--max-prefill-tokens and --chunked-prefill-size'],
  ['long-prefill-token-threshold', 'vllm', '--chunked-prefill-size'],
];

const sim: CommandModule<object, SimArgs> = {
  command: 'sim',
  describe: 'Run simulated SGLang/vLLM engines on loopback for any router to use',
  builder: (y: Argv) =>
    y
      .usage('$0 sim [options]\n\nRuns N simulated engines (each its own HTTP port) until SIGINT/SIGTERM.')
      .option('workers', {
        alias: 'n',
        type: 'number',
        default: 4,
        describe: 'number of engines',
        coerce: wholeNumberAtLeast('workers', 1),
      })
      .option('port-base', {
        type: 'number',
        default: 31000,
        describe: 'port of the first engine (the others follow); 0 picks free ports',
        coerce: portNumber('port-base'),
      })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on' })
      .option('flavor', { choices: ['sglang', 'vllm'] as const, default: 'sglang' as const, describe: 'API and metrics to speak' })
      .option('model', { type: 'string', default: 'sim-llama-3.1-8b', describe: 'served model name' })
      .option('dp-size', {
        type: 'number',
        default: 1,
        describe: 'data-parallel ranks per engine',
        coerce: wholeNumberAtLeast('dp-size', 1),
      })
      .option('max-running', {
        type: 'number',
        default: DEFAULT_ENGINE_PARAMS.maxRunning,
        describe: 'running-batch cap per rank (SGLang --max-running-requests, vLLM --max-num-seqs)',
        coerce: wholeNumberAtLeast('max-running', 1),
      })
      .option('kv-blocks', {
        type: 'number',
        defaultDescription: String(DEFAULT_ENGINE_PARAMS.kvBlocks),
        describe: 'KV cache blocks per rank (vLLM --num-gpu-blocks-override)',
        coerce: wholeNumberAtLeast('kv-blocks', 1),
      })
      .option('max-total-tokens', {
        type: 'number',
        describe: 'KV cache size per rank in tokens, instead of --kv-blocks (SGLang --max-total-tokens)',
        coerce: wholeNumberAtLeast('max-total-tokens', 1),
      })
      .option('block-size', {
        type: 'number',
        default: DEFAULT_ENGINE_PARAMS.blockSize,
        describe: 'tokens per KV block',
        coerce: wholeNumberAtLeast('block-size', 1),
      })
      .option('schedule-policy', {
        choices: SCHEDULE_POLICIES,
        default: SGLANG_SCHEDULER_DEFAULTS.schedulePolicy,
        describe: 'SGLang waiting-queue order: arrival (fcfs) or longest cached prefix (lpm)',
      })
      .option('max-prefill-tokens', {
        type: 'number',
        defaultDescription: String(SGLANG_SCHEDULER_DEFAULTS.maxPrefillTokens),
        describe: 'SGLang: input-token budget of one prefill batch',
        coerce: wholeNumberAtLeast('max-prefill-tokens', 1),
      })
      .option('chunked-prefill-size', {
        type: 'number',
        defaultDescription: String(SGLANG_SCHEDULER_DEFAULTS.chunkedPrefillSize),
        describe: 'SGLang: prompt tokens computed per step; -1 turns chunking off',
        coerce: wholeNumberAtLeastOrOff('chunked-prefill-size', 1, -1),
      })
      .option('max-num-batched-tokens', {
        type: 'number',
        defaultDescription: String(VLLM_SCHEDULER_DEFAULTS.maxNumBatchedTokens),
        describe: 'vLLM: tokens scheduled per step, decodes and prefill chunks together',
        coerce: wholeNumberAtLeast('max-num-batched-tokens', 1),
      })
      .option('long-prefill-token-threshold', {
        type: 'number',
        defaultDescription: `${VLLM_SCHEDULER_DEFAULTS.longPrefillTokenThreshold} (no cap)`,
        describe: "vLLM: cap on one request's prefill chunk per step",
        coerce: wholeNumberAtLeast('long-prefill-token-threshold', 0),
      })
      .option('speedup', {
        type: 'number',
        default: 1,
        describe: 'run simulated time this many times faster than real time',
        coerce: numberGreaterThan('speedup', 0),
      })
      .option('seed', { type: 'number', default: 42, describe: 'random seed (output lengths, text)', coerce: wholeNumber('seed') })
      .option('kv-events', {
        type: 'boolean',
        default: false,
        describe:
          'publish KV cache events over ZMQ (BlockStored, BlockRemoved, AllBlocksCleared), with a replay socket; /server_info advertises them',
      })
      .option('kv-events-format', {
        choices: ['array', 'map'] as const,
        default: 'array' as const,
        describe: 'KV events positional (array) or tagged (map), as engines before and after the format change write them',
      })
      .option('kv-events-topic', { type: 'string', default: '', describe: 'topic of the KV event messages' })
      .option('kv-events-port', {
        type: 'number',
        describe: "first port of the push channels (KV ranks, replay ranks, load ranks; the next engine's follow); free ports when unset",
        coerce: wholeNumberAtLeast('kv-events-port', 1),
      })
      .option('kv-events-buffer', {
        type: 'number',
        defaultDescription: '10000',
        describe: "batches each rank's replay socket keeps (SGLang's buffer_steps); needs --kv-events",
        coerce: wholeNumberAtLeast('kv-events-buffer', 1),
      })
      .option('load-publish', {
        type: 'boolean',
        default: false,
        describe: 'publish SGLang LoadStat over ZMQ (needs --kv-events, as SGLang does)',
      })
      .option('as-sglang', {
        type: 'boolean',
        default: false,
        describe: 'pose as a real SGLang engine: no "simulated" marker in any JSON, SGLang\'s SHA-256 block hashes in the KV events',
      })
      .option('tokenizer', {
        type: 'string',
        describe:
          "with --as-sglang: the model's tokenizer.json (or its folder, with the chat template) for text and chat prompts; the stand-in tokenizer when unset",
      })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON object with the URLs' })
      .check((argv) => {
        const a = argv as unknown as SimArgs;
        if (a['kv-blocks'] !== undefined && a['max-total-tokens'] !== undefined) {
          throw usageError('--kv-blocks and --max-total-tokens both size the KV cache; give one');
        }
        for (const [flag, flavor, instead] of FLAVOUR_FLAGS) {
          if (a[flag] !== undefined && a.flavor !== flavor) {
            throw usageError(`--${flag} is a ${flavor} flag and does nothing with --flavor ${a.flavor}; use ${instead}`);
          }
        }
        if (a['load-publish'] && a.flavor !== 'sglang') {
          throw usageError("--load-publish is SGLang's LoadStat push; vLLM has none (routers poll its /metrics)");
        }
        if (a['kv-events-port'] !== undefined && !a['kv-events']) {
          throw usageError('--kv-events-port places the KV event sockets; it needs --kv-events');
        }
        if (a['kv-events-buffer'] !== undefined && !a['kv-events']) {
          throw usageError("--kv-events-buffer sizes the KV events' replay buffer; it needs --kv-events");
        }
        if (a['as-sglang'] && a.flavor !== 'sglang') {
          throw usageError(`--as-sglang poses as an SGLang engine; it does nothing with --flavor ${a.flavor}`);
        }
        if (a.tokenizer !== undefined && !a['as-sglang']) {
          throw usageError('--tokenizer needs --as-sglang: a simulated engine says so, and routers key it with the stand-in tokenizer');
        }
        if (a['load-publish'] && !a['kv-events']) {
          throw usageError('--load-publish needs --kv-events: SGLang publishes load only beside its KV events');
        }
        if (a['schedule-policy'] === 'lpm' && a.flavor !== 'sglang') {
          throw usageError('--schedule-policy lpm is an sglang policy; vLLM schedules its waiting queue in arrival order');
        }
        const chunk = a['chunked-prefill-size'];
        if (chunk !== undefined && chunk !== -1 && chunk < a['block-size']) {
          throw usageError(`--chunked-prefill-size must be at least --block-size ${a['block-size']}, or -1 (got ${chunk})`);
        }
        if (a['max-total-tokens'] !== undefined && a['max-total-tokens'] < a['block-size']) {
          throw usageError(
            `--max-total-tokens must hold at least one block of --block-size ${a['block-size']} (got ${a['max-total-tokens']})`,
          );
        }
        return true;
      })
      .example('$0 sim --workers 4 --port-base 31000', 'four SGLang-style engines on ports 31000-31003')
      .example('$0 sim -n 2 --port-base 0 --json', 'free ports, machine-readable')
      .example('$0 sim --flavor vllm --dp-size 2 --speedup 10', 'vLLM-style engines with two ranks, 10x faster')
      .example('$0 sim --kv-events --load-publish', 'engines that push KV events and LoadStat as SGLang does')
      .example(
        '$0 sim --flavor vllm --kv-events --kv-events-port 5557',
        'vLLM engines publishing KV events from port 5557, as vLLM does by default',
      )
      .example('$0 sim --schedule-policy lpm --max-total-tokens 65536', 'SGLang engines sorting by cached prefix, with a small KV pool')
      .example(
        '$0 sim --as-sglang --tokenizer ./Qwen3-0.6B --kv-events --load-publish',
        'engines a router cannot tell from SGLang serving that model',
      ) as unknown as Argv<SimArgs>,
  handler: async (argv) => {
    const { startSimFleet } = await import('../src/sim/index.js');
    // HfChatTokenizer's encodeChat/encodeText are the engine's SimTokenizer; they return a reused view, which the engine copies.
    const tokenizer =
      argv.tokenizer === undefined ? undefined : (await import('../src/tokenizer/index.js')).HfChatTokenizer.load(argv.tokenizer);
    const params: Partial<EngineParams> = { schedulePolicy: argv['schedule-policy'] };
    if (argv['max-prefill-tokens'] !== undefined) params.maxPrefillTokens = argv['max-prefill-tokens'];
    if (argv['chunked-prefill-size'] !== undefined) params.chunkedPrefillSize = argv['chunked-prefill-size'];
    if (argv['max-num-batched-tokens'] !== undefined) params.maxNumBatchedTokens = argv['max-num-batched-tokens'];
    if (argv['long-prefill-token-threshold'] !== undefined) params.longPrefillTokenThreshold = argv['long-prefill-token-threshold'];
    // Listening first: a supervisor may signal as soon as it reads the URLs.
    const stops = new StopSignals().listen();
    // Closing aborts whatever the engines hold, so the first request is the whole stop and
    // exits 0 (man routerctl-sim); a second one only matters if closing hangs.
    void stops.second.then(() => process.exit(stops.exitStatus(true)));
    try {
      const fleet = await startSimFleet({
        workers: argv.workers,
        host: argv.host,
        portBase: argv['port-base'],
        flavor: argv.flavor,
        model: argv.model,
        dpSize: argv['dp-size'],
        maxRunning: argv['max-running'],
        blockSize: argv['block-size'],
        speedup: argv.speedup,
        seed: argv.seed,
        params,
        ...(argv['kv-blocks'] !== undefined ? { kvBlocks: argv['kv-blocks'] } : {}),
        ...(argv['max-total-tokens'] !== undefined ? { maxTotalTokens: argv['max-total-tokens'] } : {}),
        push: {
          kvEvents: argv['kv-events'],
          kvFormat: argv['kv-events-format'],
          topic: argv['kv-events-topic'],
          loadPublish: argv['load-publish'],
          ...(argv['kv-events-port'] !== undefined ? { port: argv['kv-events-port'] } : {}),
          ...(argv['kv-events-buffer'] !== undefined ? { replayBuffer: argv['kv-events-buffer'] } : {}),
        },
        asSglang: argv['as-sglang'],
        ...(tokenizer !== undefined ? { tokenizer } : {}),
      });
      // What to give the router as --kv-events: vLLM advertises nothing, so an operator names the endpoints.
      const kvEventsConfig = argv['kv-events']
        ? Object.fromEntries(fleet.servers.map((srv) => [srv.url, srv.engine.push!.kvEventsEntry()]))
        : null;
      if (argv.json) {
        process.stdout.write(
          `${JSON.stringify({
            urls: fleet.urls,
            flavor: argv.flavor,
            model: argv.model,
            dp_size: argv['dp-size'],
            simulated: true,
            as_sglang: argv['as-sglang'],
            tokenizer: argv.tokenizer ?? null,
            ...(argv['kv-events']
              ? {
                  kv_events: fleet.servers.map((srv) => ({
                    ...srv.engine.push!.serverInfoBlock(),
                    replay_endpoints: srv.engine.ranks.map((_, r) => srv.engine.push!.replayEndpoint(r)),
                  })),
                }
              : {}),
            ...(kvEventsConfig ? { kv_events_config: kvEventsConfig } : {}),
          })}\n`,
        );
      } else {
        for (const url of fleet.urls) process.stdout.write(`${url}\n`);
        process.stderr.write(
          `routerctl sim: ${fleet.urls.length} simulated ${argv.flavor} engines serving ${argv.model}; Ctrl-C to stop\n`,
        );
        if (argv['as-sglang']) {
          process.stderr.write(
            `routerctl sim: posing as SGLang (no "simulated" marker, SGLang block hashes); prompts tokenized ${argv.tokenizer === undefined ? 'by the stand-in tokenizer (token-id requests need none)' : `with ${argv.tokenizer}`}\n`,
          );
        }
        if (kvEventsConfig && argv.flavor === 'vllm') {
          process.stderr.write(
            `routerctl sim: vLLM does not advertise its KV events; give the router --kv-events '${JSON.stringify(kvEventsConfig)}'\n`,
          );
        }
      }
      await stops.first;
      await fleet.close();
    } finally {
      stops.dispose();
    }
  },
};

export default sim;
