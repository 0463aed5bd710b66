import type { Argv } from 'yargs';
import { usageError } from '../src/errors/index.js';
import { StopSignals, defineCommand } from '../src/cli/index.js';
import type { EngineParams } from '../src/sim/flags/index.js';
import { SIM_OPTIONS } from './options/sim.js';
import { COMMAND_DESCRIPTIONS } from './registry/command-descriptions.js';

/** Flags that only one flavour's scheduler reads; given to the other they would silently do nothing. */
const FLAVOUR_FLAGS: ReadonlyArray<[flag: keyof typeof SIM_OPTIONS, flavor: 'sglang' | 'vllm', instead: string]> = [
  ['max-prefill-tokens', 'sglang', '--max-num-batched-tokens'],
  ['chunked-prefill-size', 'sglang', '--max-num-batched-tokens or --long-prefill-token-threshold'],
  ['max-num-batched-tokens', 'vllm', '--max-prefill-tokens and --chunked-prefill-size'],
  ['long-prefill-token-threshold', 'vllm', '--chunked-prefill-size'],
  ['max-num-queued-reqs', 'vllm', 'nothing: the SGLang flavour refuses past 1,000 waiting'],
];

const sim = defineCommand({
  command: 'sim',
  describe: COMMAND_DESCRIPTIONS.sim,
  builder: (y: Argv) =>
    y
      .usage('$0 sim [options]\n\nRuns N simulated engines (each its own HTTP port) until SIGINT/SIGTERM.')
      .options(SIM_OPTIONS)
      .check((argv) => {
        if (argv['kv-blocks'] !== undefined && argv['max-total-tokens'] !== undefined) {
          throw usageError('--kv-blocks and --max-total-tokens both size the KV cache; give one');
        }
        for (const [flag, flavor, instead] of FLAVOUR_FLAGS) {
          if (argv[flag] !== undefined && argv.flavor !== flavor) {
            throw usageError(`--${flag} is a ${flavor} flag and does nothing with --flavor ${argv.flavor}; use ${instead}`);
          }
        }
        if (argv['load-publish'] && argv.flavor !== 'sglang') {
          throw usageError("--load-publish is SGLang's LoadStat push; vLLM has none (routers poll its /metrics)");
        }
        if (argv['kv-events-port'] !== undefined && !argv['kv-events']) {
          throw usageError('--kv-events-port places the KV event sockets; it needs --kv-events');
        }
        if (argv['kv-events-buffer'] !== undefined && !argv['kv-events']) {
          throw usageError("--kv-events-buffer sizes the KV events' replay buffer; it needs --kv-events");
        }
        if (argv['as-sglang'] && argv.flavor !== 'sglang') {
          throw usageError(`--as-sglang poses as an SGLang engine; it does nothing with --flavor ${argv.flavor}`);
        }
        if (argv.tokenizer !== undefined && !argv['as-sglang']) {
          throw usageError('--tokenizer needs --as-sglang: a simulated engine says so, and routers key it with the stand-in tokenizer');
        }
        if (argv['load-publish'] && !argv['kv-events']) {
          throw usageError('--load-publish needs --kv-events: SGLang publishes load only beside its KV events');
        }
        if (argv['schedule-policy'] === 'lpm' && argv.flavor !== 'sglang') {
          throw usageError('--schedule-policy lpm is an sglang policy; vLLM schedules its waiting queue in arrival order');
        }
        const chunk = argv['chunked-prefill-size'];
        if (chunk !== undefined && chunk !== -1 && chunk < argv['block-size']) {
          throw usageError(`--chunked-prefill-size must be at least --block-size ${argv['block-size']}, or -1 (got ${chunk})`);
        }
        if (argv['max-total-tokens'] !== undefined && argv['max-total-tokens'] < argv['block-size']) {
          throw usageError(
            `--max-total-tokens must hold at least one block of --block-size ${argv['block-size']} (got ${argv['max-total-tokens']})`,
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
      ),
  handler: async (argv) => {
    const { startSimFleet } = await import('../src/sim/index.js');
    // HfChatTokenizer's encodeChat/encodeText are the engine's SimTokenizer; they return a reused view, which the engine copies.
    const tokenizer =
      argv.tokenizer === undefined ? undefined : (await import('../src/tokenizer/index.js')).HfChatTokenizer.load(argv.tokenizer);
    const params: Partial<EngineParams> = { schedulePolicy: argv['schedule-policy'], maxModelLen: argv['context-length'] };
    if (argv['max-prefill-tokens'] !== undefined) params.maxPrefillTokens = argv['max-prefill-tokens'];
    if (argv['chunked-prefill-size'] !== undefined) params.chunkedPrefillSize = argv['chunked-prefill-size'];
    if (argv['max-num-batched-tokens'] !== undefined) params.maxNumBatchedTokens = argv['max-num-batched-tokens'];
    if (argv['long-prefill-token-threshold'] !== undefined) params.longPrefillTokenThreshold = argv['long-prefill-token-threshold'];
    if (argv['max-num-queued-reqs'] !== undefined) params.maxNumQueuedReqs = argv['max-num-queued-reqs'];
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
});

export default sim;
