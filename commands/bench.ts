import type { Argv, CommandModule } from 'yargs';
import { ADMIN_TOKEN_OPTION, adminToken, numberAtLeast, numberGreaterThan, wholeNumberAtLeast } from '../src/cli/index.js';
import type { BenchArgv as BenchArgs } from '../src/bench/index.js';
import { usageError } from '../src/errors/index.js';

interface TraceArgs {
  trace: string | undefined;
  capture: string | undefined;
  token: string | undefined;
  workload: 'chat' | 'gsp';
  'gsp-num-groups': number;
  'gsp-prompts-per-group': number;
  'gsp-system-prompt-len': number;
  'gsp-question-len': number;
  'gsp-output-len': number;
  'gsp-range-ratio': number;
  'gsp-num-turns': number;
  'gsp-group-distribution': 'uniform' | 'zipf';
  'gsp-zipf-alpha': number | undefined;
  'gsp-ordered': boolean;
  'trace-block-size': number;
  'trace-speedup': number;
  'trace-limit': number | undefined;
  'trace-window': string | undefined;
  clock: 'wall' | 'virtual';
  'slo-ttft-ms': number;
}

/** `START..END` seconds of trace time. */
function traceWindow(text: string | undefined): [number, number] | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)\.\.(\d+(?:\.\d+)?)$/.exec(text.trim());
  if (!m || Number(m[2]) <= Number(m[1]))
    throw usageError(`--trace-window takes START..END seconds with END after START, e.g. 0..600 (got '${text}')`);
  return [Number(m[1]), Number(m[2])];
}

const MODE = 'Mode (one of):';
const WORKLOAD = 'Workload:';
const FLEET = 'Simulated fleet (--compare):';
const RUN = 'Run:';
const TRACE = 'Traces and the virtual clock:';
const GSP = 'Shared-prefix workload (--workload gsp, SGLang bench_serving names):';

const bench: CommandModule<object, BenchArgs> = {
  command: 'bench',
  describe: 'Drive a shared-prefix chat workload at a router, or compare router configurations on identical simulated fleets',
  builder: (y: Argv) =>
    y
      // A configuration such as "--policy round_robin" is one word that starts with --: keep it as a value, not a flag.
      // yargs still takes such a word for a flag when the text before its first non-word character names one of
      // ours, so no option here may be named like the first word of a router flag (model, load, …); a test checks.
      .parserConfiguration({ 'unknown-options-as-args': true })
      .usage(
        '$0 bench --url URL [options]\n$0 bench --compare "ARGS A" "ARGS B" ... [options]\n\n' +
          'Plays a deterministic chat workload (long shared system prompts with Zipf popularity, multi-turn sessions, ' +
          'Poisson arrivals with bursts), streams every request, and reports TTFT, inter-token latency, latency, ' +
          'throughput, errors by status and the engine-reported cached-token ratio. With --compare, each configuration ' +
          'gets a fresh simulated fleet and router (separate processes, same seed, same arrivals) and the results are ' +
          "printed side by side with the routers' decision counters and charts.",
      )
      .option('url', { type: 'string', group: MODE, describe: 'drive this OpenAI-compatible endpoint (a router or an engine)' })
      .option('compare', {
        type: 'string',
        array: true,
        group: MODE,
        describe: 'router configurations to compare, one quoted string of serve flags each ("" = defaults)',
      })
      .option('sweep', {
        type: 'string',
        array: true,
        group: MODE,
        describe: 'FLAG=V1,V2,...: one configuration per value (off = flag left out); several sweeps multiply',
      })
      .option('router-args', { type: 'string', default: '', group: MODE, describe: 'serve flags added to every configuration' })
      .option('capture', {
        type: 'string',
        group: MODE,
        describe:
          'with --url: write what that router serves for --duration as a Mooncake-format trace (arrivals, sizes, prefix block ids; never text) to replay with --trace',
      })
      .option('token', { ...ADMIN_TOKEN_OPTION, group: MODE })
      .option('rate', {
        type: 'number',
        group: WORKLOAD,
        describe: 'arrivals per second between bursts [default: 10; with --compare, --fleet-load of the fleet capacity]',
        coerce: numberGreaterThan('rate', 0),
      })
      .option('fleet-load', {
        type: 'number',
        default: 0.9,
        group: WORKLOAD,
        describe: 'with --compare and no --rate: mean load as a share of the fleet capacity, bursts included',
        coerce: numberGreaterThan('fleet-load', 0),
      })
      .option('sessions', {
        type: 'number',
        default: 128,
        group: WORKLOAD,
        describe: 'conversations open at once',
        coerce: wholeNumberAtLeast('sessions', 1),
      })
      .option('seed', {
        type: 'number',
        default: 7,
        group: WORKLOAD,
        describe: 'workload seed (arrivals, sessions, messages, max_tokens); the simulated fleet uses it too',
        coerce: wholeNumberAtLeast('seed', 0),
      })
      .option('families', {
        type: 'number',
        default: 16,
        group: WORKLOAD,
        describe: 'system prompts (prompt families)',
        coerce: wholeNumberAtLeast('families', 1),
      })
      .option('zipf', {
        type: 'number',
        default: 1.1,
        group: WORKLOAD,
        describe: 'Zipf exponent of family popularity (0 = uniform)',
        coerce: numberAtLeast('zipf', 0),
      })
      .option('system-tokens', { type: 'string', default: '1000-4000', group: WORKLOAD, describe: 'MIN-MAX tokens of a system prompt' })
      .option('turns', {
        type: 'number',
        default: 4,
        group: WORKLOAD,
        describe: 'most turns in a session (uniform 1..N)',
        coerce: wholeNumberAtLeast('turns', 1),
      })
      .option('output-tokens', {
        type: 'number',
        default: 48,
        group: WORKLOAD,
        describe: 'median max_tokens (lognormal, sigma 0.5)',
        coerce: wholeNumberAtLeast('output-tokens', 1),
      })
      .option('max-output-tokens', {
        type: 'number',
        default: 128,
        group: WORKLOAD,
        describe: 'cap on max_tokens',
        coerce: wholeNumberAtLeast('max-output-tokens', 1),
      })
      .option('burst', { type: 'string', default: '3x3s/15s', group: WORKLOAD, describe: 'FACTORxSECONDS/PERIOD rate bursts, or off' })
      .option('duration', {
        type: 'string',
        group: RUN,
        describe: 'how long arrivals go on: 60s, 2m, 500ms or seconds [default: 60s; 30s with --compare]',
      })
      .option('warmup', {
        type: 'string',
        default: '0s',
        group: RUN,
        describe: 'leave requests sent in the first part of the run out of the figures',
      })
      .option('grace', {
        type: 'string',
        group: RUN,
        describe: 'after --duration, how long running requests may finish before they are cut [default: 5s; 30s with --compare]',
      })
      .option('timeout', { type: 'string', default: '120s', group: RUN, describe: 'per-request limit' })
      .option('model-name', { type: 'string', group: RUN, describe: 'model to request [default: the first one /v1/models lists]' })
      .option('max-in-flight', {
        type: 'number',
        default: 1024,
        group: RUN,
        describe: 'requests outstanding at most; arrivals beyond are shed and counted',
        coerce: wholeNumberAtLeast('max-in-flight', 1),
      })
      .option('json', { type: 'boolean', default: false, group: RUN, describe: 'print one JSON object on stdout, nothing else' })
      .option('sim-workers', {
        type: 'number',
        default: 8,
        group: FLEET,
        describe: 'simulated engines per configuration',
        coerce: wholeNumberAtLeast('sim-workers', 1),
      })
      .option('sim-max-running', {
        type: 'number',
        default: 8,
        group: FLEET,
        describe: 'running-batch cap per engine',
        coerce: wholeNumberAtLeast('sim-max-running', 1),
      })
      .option('sim-speedup', {
        type: 'number',
        default: 0.5,
        group: FLEET,
        describe: 'simulated time per real time (below 1: a slower model)',
        coerce: numberGreaterThan('sim-speedup', 0),
      })
      .option('sim-kv-blocks', {
        type: 'number',
        default: 1024,
        group: FLEET,
        describe: 'KV cache blocks per engine (16 tokens each)',
        coerce: wholeNumberAtLeast('sim-kv-blocks', 1),
      })
      .option('trace', {
        type: 'string',
        group: TRACE,
        describe: 'replay a Mooncake-format trace (JSONL: timestamp ms, input_length, output_length, hash_ids) through each configuration',
      })
      .option('trace-block-size', {
        type: 'number',
        default: 512,
        group: TRACE,
        describe: 'tokens per hash id in the trace',
        coerce: wholeNumberAtLeast('trace-block-size', 1),
      })
      .option('trace-speedup', {
        type: 'number',
        default: 1,
        group: TRACE,
        describe: 'replay the trace this many times faster',
        coerce: numberGreaterThan('trace-speedup', 0),
      })
      .option('trace-limit', {
        type: 'number',
        group: TRACE,
        describe: 'replay only the first N requests',
        coerce: wholeNumberAtLeast('trace-limit', 1),
      })
      .option('trace-window', {
        type: 'string',
        group: TRACE,
        describe: 'replay only requests from START to END seconds of trace time: START..END',
      })
      .option('clock', {
        choices: ['wall', 'virtual'] as const,
        default: 'wall' as const,
        group: TRACE,
        describe:
          "with --trace: wall replays over HTTP to real processes in real time; virtual runs the router's own code on a simulated clock, no sockets",
      })
      .option('slo-ttft-ms', {
        type: 'number',
        default: 2000,
        group: TRACE,
        describe: 'goodput counts requests whose TTFT is at most this',
        coerce: numberGreaterThan('slo-ttft-ms', 0),
      })
      .option('workload', {
        choices: ['chat', 'gsp'] as const,
        default: 'chat' as const,
        group: WORKLOAD,
        describe: "chat: sessions of the generated chat workload; gsp: SGLang's generated-shared-prefix dataset, replayed like a trace",
      })
      .option('gsp-num-groups', {
        type: 'number',
        default: 64,
        group: GSP,
        describe: 'system prompt groups',
        coerce: wholeNumberAtLeast('gsp-num-groups', 1),
      })
      .option('gsp-prompts-per-group', {
        type: 'number',
        default: 16,
        group: GSP,
        describe: 'prompts (conversations) per group',
        coerce: wholeNumberAtLeast('gsp-prompts-per-group', 1),
      })
      .option('gsp-system-prompt-len', {
        type: 'number',
        default: 2048,
        group: GSP,
        describe: 'system prompt tokens',
        coerce: wholeNumberAtLeast('gsp-system-prompt-len', 1),
      })
      .option('gsp-question-len', {
        type: 'number',
        default: 128,
        group: GSP,
        describe: 'question tokens',
        coerce: wholeNumberAtLeast('gsp-question-len', 1),
      })
      .option('gsp-output-len', {
        type: 'number',
        default: 256,
        group: GSP,
        describe: 'output tokens',
        coerce: wholeNumberAtLeast('gsp-output-len', 1),
      })
      .option('gsp-range-ratio', {
        type: 'number',
        default: 1,
        group: GSP,
        describe: 'lengths drawn uniformly from [L × ratio, L] (1: fixed)',
        coerce: (v: number) => {
          if (!(v > 0 && v <= 1)) throw usageError(`--gsp-range-ratio takes a number in (0, 1] (got ${v})`);
          return v;
        },
      })
      .option('gsp-num-turns', {
        type: 'number',
        default: 1,
        group: GSP,
        describe: 'turns per conversation; turn k resends the conversation once turn k-1 finished',
        coerce: wholeNumberAtLeast('gsp-num-turns', 1),
      })
      .option('gsp-group-distribution', {
        choices: ['uniform', 'zipf'] as const,
        default: 'uniform' as const,
        group: GSP,
        describe: 'how prompts are spread over groups',
      })
      .option('gsp-zipf-alpha', {
        type: 'number',
        group: GSP,
        describe: 'with zipf: P(group g) ∝ 1/(g+1)^alpha',
        coerce: numberGreaterThan('gsp-zipf-alpha', 0),
      })
      .option('gsp-ordered', {
        type: 'boolean',
        default: false,
        group: GSP,
        describe: 'send conversations in group order instead of shuffled',
      })
      .option('sim-flavor', {
        choices: ['sglang', 'vllm'] as const,
        default: 'sglang' as const,
        group: FLEET,
        describe: 'engine API to speak',
      })
      .example('$0 bench --url http://127.0.0.1:30000 --rate 8 --duration 2m', 'a router already running')
      .example(
        '$0 bench --compare "--policy round_robin" "--policy cache_aware" "--worker-queue-limit 6"',
        'three configurations, 8 simulated engines each',
      )
      .example('$0 bench --compare "" --sweep worker-queue-limit=2,4,6,8,12 --duration 60s', 'what each queue limit buys, against no limit')
      .example('$0 bench --compare "--policy round_robin" "" --duration 5s --json | jq .runs[].summary.ttft_ms', 'for scripts')
      .epilogue(
        'Exit status: 0 when the run completed and some request succeeded, 1 when none did or a fleet failed to start, ' +
          '2 for invalid options, 130 when interrupted (the report of what ran is still printed). See man routerctl-bench.',
      ) as unknown as Argv<BenchArgs>,
  handler: async (argv) => {
    const t = argv as unknown as TraceArgs;
    if (t.capture !== undefined) {
      if (argv.url === undefined) throw usageError('--capture listens to a running router: give it with --url');
      if (t.trace !== undefined || t.workload === 'gsp' || (argv.compare ?? []).length > 0)
        throw usageError('--capture only records: it takes no --trace, --workload gsp or --compare');
      const { parseDuration, runCapture } = await import('../src/bench/index.js');
      const durationMs = parseDuration(argv.duration ?? '60s');
      if (durationMs === undefined || durationMs <= 0)
        throw usageError(`--duration takes a duration such as 60s or 10m (got '${String(argv.duration)}')`);
      const stop = new AbortController();
      const onSigint = (): void => stop.abort();
      process.once('SIGINT', onSigint);
      try {
        const r = await runCapture({
          url: argv.url,
          file: t.capture,
          durationMs,
          blockTokens: t['trace-block-size'],
          token: adminToken(t.token),
          signal: stop.signal,
        });
        const line = {
          file: t.capture,
          requests: r.requests,
          dropped: r.dropped,
          digest: r.digest,
          block_size: t['trace-block-size'],
          cut_short_s: r.cutShortMs === undefined ? null : Math.round(r.cutShortMs / 1000),
        };
        if (r.cutShortMs !== undefined)
          process.stderr.write(
            `warning: the router ended the capture after ${Math.round(r.cutShortMs / 1000)} s (it stopped or restarted); the file has what came before\n`,
          );
        if (argv.json) process.stdout.write(`${JSON.stringify(line)}\n`);
        else
          process.stdout.write(
            `captured ${r.requests} request${r.requests === 1 ? '' : 's'} to ${t.capture} (digest ${r.digest}, blocks of ${t['trace-block-size']} tokens${r.dropped > 0 ? `; ${r.dropped} dropped: the capture read too slowly` : ''})\n` +
              `replay: routerctl bench --trace ${t.capture} --clock virtual --compare "" "--worker-queue-limit 4"\n`,
          );
        process.exitCode = stop.signal.aborted ? 130 : 0;
      } finally {
        process.off('SIGINT', onSigint);
      }
      return;
    }
    const gsp = t.workload === 'gsp';
    if (t.trace !== undefined || t.clock === 'virtual' || gsp) {
      if (t.trace !== undefined && gsp) throw usageError('--trace and --workload gsp are two workloads: give one');
      if (t.trace === undefined && !gsp) throw usageError('--clock virtual replays a trace: give it with --trace FILE (or --workload gsp)');
      if ((t['gsp-group-distribution'] === 'zipf') !== (t['gsp-zipf-alpha'] !== undefined))
        throw usageError('--gsp-zipf-alpha goes with --gsp-group-distribution zipf, and zipf needs it');
      if (argv.url !== undefined)
        throw usageError(`${gsp ? '--workload gsp' : '--trace'} runs simulated fleets of its own: it takes no --url`);
      const { parseDuration, runTraceBench } = await import('../src/bench/index.js');
      const timeoutMs = parseDuration(String(argv.timeout));
      if (timeoutMs === undefined || timeoutMs <= 0)
        throw usageError(`--timeout takes a duration such as 120s or 2m (got '${String(argv.timeout)}')`);
      process.exitCode = await runTraceBench({
        clock: t.clock,
        simSpeedup: argv['sim-speedup'],
        timeoutMs,
        note: argv.json ? undefined : (line) => void process.stderr.write(`${line}\n`),
        file: t.trace,
        gsp: gsp
          ? {
              numGroups: t['gsp-num-groups'],
              promptsPerGroup: t['gsp-prompts-per-group'],
              systemPromptLen: t['gsp-system-prompt-len'],
              questionLen: t['gsp-question-len'],
              outputLen: t['gsp-output-len'],
              rangeRatio: t['gsp-range-ratio'],
              numTurns: t['gsp-num-turns'],
              groupDistribution: t['gsp-group-distribution'],
              zipfAlpha: t['gsp-zipf-alpha'],
              rate: argv.rate,
              ordered: t['gsp-ordered'],
              seed: argv.seed,
            }
          : undefined,
        traceBlockSize: t['trace-block-size'],
        speedup: t['trace-speedup'],
        limit: t['trace-limit'],
        window: traceWindow(t['trace-window']),
        compare: (argv.compare ?? []).map(String),
        sweep: (argv.sweep ?? []).map(String),
        routerArgs: argv['router-args'],
        workers: argv['sim-workers'],
        kvBlocks: argv['sim-kv-blocks'],
        maxRunning: argv['sim-max-running'],
        seed: argv.seed,
        sloTtftMs: t['slo-ttft-ms'],
        json: argv.json,
      });
      return;
    }
    const { parseBenchArgs } = await import('../src/bench/index.js');
    const { runBench } = await import('../src/bench/index.js');
    process.exitCode = await runBench(parseBenchArgs(argv));
  },
};

export default bench;
