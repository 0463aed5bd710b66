import type { InferredOptionTypes, Options } from 'yargs';
import { ADMIN_TOKEN_OPTION, numberGreaterThan, wholeNumberAtLeast } from '../../src/cli/index.js';
import { CHAT_SPEC_HELP, GSP_SPEC_HELP, PRESET_NAMES, parseChatSpec, parseGspSpec } from '../../src/bench/flags/index.js';
import { DEFAULT_ENGINE_PARAMS } from '../../src/sim/flags/index.js';

// `routerctl bench run|compare|capture`'s flags, read by their yargs builders and by the man page
// generator (OPTIONS). Each subcommand carries only its own, at most 30 (a test counts them).

const TARGET = 'Target:';
const CONFIGURATIONS = 'Configurations:';
const WORKLOAD = 'Workload:';
const RUN = 'Run:';
const FLEET = 'Simulated fleet:';
const TRACE = 'Traces and the virtual clock:';
const CAPTURE = 'Capture:';

/** What feeds the run or the comparison: the same inputs for both (docs/bench.md §Workloads). */
const WORKLOAD_OPTIONS = {
  workload: {
    choices: ['chat', 'gsp'],
    default: 'chat',
    group: WORKLOAD,
    describe: "chat: sessions of the generated chat workload; gsp: SGLang's generated-shared-prefix dataset, replayed like a trace",
  },
  rate: {
    type: 'number',
    group: WORKLOAD,
    describe: 'arrivals per second between bursts (gsp: conversations per second, Poisson)',
    defaultDescription: '10 with --url, else --fleet-load; gsp: all at once',
    coerce: numberGreaterThan('rate', 0),
  },
  seed: {
    type: 'number',
    default: 7,
    group: WORKLOAD,
    describe: 'workload seed (arrivals, sessions, messages, max_tokens); the simulated fleet uses it too',
    coerce: wholeNumberAtLeast('seed', 0),
  },
  chat: {
    type: 'string',
    array: true,
    group: WORKLOAD,
    describe: `the chat workload's knobs, KEY=VALUE comma-separated: ${CHAT_SPEC_HELP}`,
    defaultDescription: 'the values above',
    coerce: parseChatSpec,
  },
  gsp: {
    type: 'string',
    array: true,
    group: WORKLOAD,
    describe: `with --workload gsp: SGLang bench_serving's --gsp-* knobs without the prefix, KEY=VALUE comma-separated: ${GSP_SPEC_HELP}`,
    defaultDescription: 'the values above',
    coerce: parseGspSpec,
  },
} as const satisfies Record<string, Options>;

/** How a run is timed and measured, whatever its target. */
const RUN_OPTIONS = {
  warmup: {
    type: 'string',
    default: '0s',
    group: RUN,
    describe: 'leave requests sent in the first part of the run out of the figures',
  },
  timeout: { type: 'string', default: '120s', group: RUN, describe: 'per-request limit' },
  'model-name': {
    type: 'string',
    group: RUN,
    describe: 'model to request',
    defaultDescription: 'the first one /v1/models lists',
  },
  'max-in-flight': {
    type: 'number',
    default: 1024,
    group: RUN,
    describe: 'requests outstanding at most; arrivals beyond are shed and counted',
    coerce: wholeNumberAtLeast('max-in-flight', 1),
  },
  json: { type: 'boolean', default: false, group: RUN, describe: 'print one JSON object on stdout, nothing else' },
} as const satisfies Record<string, Options>;

/** The simulated engines each configuration gets. */
const FLEET_OPTIONS = {
  'sim-workers': {
    type: 'number',
    default: 8,
    group: FLEET,
    describe: 'simulated engines per configuration',
    coerce: wholeNumberAtLeast('sim-workers', 1),
  },
  'sim-max-running': {
    type: 'number',
    default: 8,
    group: FLEET,
    describe: 'running-batch cap per engine',
    coerce: wholeNumberAtLeast('sim-max-running', 1),
  },
  'sim-speedup': {
    type: 'number',
    default: 0.5,
    group: FLEET,
    describe: 'simulated time per real time (below 1: a slower model)',
    coerce: numberGreaterThan('sim-speedup', 0),
  },
  'sim-kv-blocks': {
    type: 'number',
    default: 1024,
    group: FLEET,
    describe: 'KV cache blocks per engine (16 tokens each)',
    coerce: wholeNumberAtLeast('sim-kv-blocks', 1),
  },
  'sim-context-length': {
    type: 'number',
    default: DEFAULT_ENGINE_PARAMS.maxModelLen,
    group: FLEET,
    describe: "the model's context length per engine: a longer prompt plus output is refused, and counted so",
    coerce: wholeNumberAtLeast('sim-context-length', 2),
  },
  'sim-flavor': {
    choices: ['sglang', 'vllm'],
    default: 'sglang',
    group: FLEET,
    describe: 'engine API to speak',
  },
  'fleet-load': {
    type: 'number',
    default: 0.9,
    group: FLEET,
    describe: 'with no --rate: mean load as a share of the fleet capacity, bursts included',
    coerce: numberGreaterThan('fleet-load', 0),
  },
} as const satisfies Record<string, Options>;

const TRACE_BLOCK_SIZE = {
  type: 'number',
  default: 512,
  describe: 'tokens per hash id in the trace',
  coerce: wholeNumberAtLeast('trace-block-size', 1),
} as const satisfies Options;

/** Replaying a trace or the gsp dataset, on either clock. */
const TRACE_OPTIONS = {
  trace: {
    type: 'string',
    group: TRACE,
    describe: 'replay a Mooncake-format trace (JSONL: timestamp ms, input_length, output_length, hash_ids)',
  },
  'trace-block-size': { ...TRACE_BLOCK_SIZE, group: TRACE },
  'trace-speedup': {
    type: 'number',
    default: 1,
    group: TRACE,
    describe: 'replay the trace this many times faster',
    coerce: numberGreaterThan('trace-speedup', 0),
  },
  'trace-limit': {
    type: 'number',
    group: TRACE,
    describe: 'replay only the first N requests',
    coerce: wholeNumberAtLeast('trace-limit', 1),
  },
  'trace-window': {
    type: 'string',
    group: TRACE,
    describe: 'replay only requests from START to END seconds of trace time: START..END',
  },
  clock: {
    choices: ['wall', 'virtual'],
    default: 'wall',
    group: TRACE,
    describe:
      "with --trace or --workload gsp: wall replays over HTTP to real processes in real time; virtual runs the router's own code on a simulated clock, no sockets",
  },
  'slo-ttft-ms': {
    type: 'number',
    default: 2000,
    group: TRACE,
    describe: 'goodput counts requests whose TTFT is at most this',
    coerce: numberGreaterThan('slo-ttft-ms', 0),
  },
} as const satisfies Record<string, Options>;

/** `bench run`: one target, an endpoint or one simulated configuration. */
export const BENCH_RUN_OPTIONS = {
  url: { type: 'string', group: TARGET, describe: 'drive this OpenAI-compatible endpoint (a router or an engine)' },
  'router-args': {
    type: 'string',
    default: '',
    group: TARGET,
    describe:
      'without --url: serve flags of the one simulated router, one quoted string given with = (--router-args="--policy round_robin")',
  },
  ...WORKLOAD_OPTIONS,
  duration: {
    type: 'string',
    group: RUN,
    describe: 'how long arrivals go on: 60s, 2m, 500ms or seconds',
    defaultDescription: '60s against --url, 30s on a simulated fleet',
  },
  grace: {
    type: 'string',
    group: RUN,
    describe: 'after --duration, how long running requests may finish before they are cut',
    defaultDescription: '5s against --url, 30s on a simulated fleet',
  },
  ...RUN_OPTIONS,
  ...FLEET_OPTIONS,
  ...TRACE_OPTIONS,
} as const satisfies Record<string, Options>;

/** `bench compare`: configurations (positional) on identical simulated fleets, fed the same inputs. */
export const BENCH_COMPARE_OPTIONS = {
  sweep: {
    type: 'string',
    array: true,
    group: CONFIGURATIONS,
    describe: 'FLAG=V1,V2,...: one configuration per value (off = flag left out); several sweeps multiply',
  },
  'router-args': {
    type: 'string',
    default: '',
    group: CONFIGURATIONS,
    describe: 'serve flags added to every configuration, given with = (--router-args="--worker-queue-limit 6")',
  },
  recommend: {
    type: 'boolean',
    default: false,
    group: CONFIGURATIONS,
    describe:
      'with --trace (or --workload gsp) and --clock virtual: pick the best configuration on trace windows 1-3 (seeds for gsp), check it on 4-6, and say whether to set the gate',
  },
  ...WORKLOAD_OPTIONS,
  duration: {
    type: 'string',
    group: RUN,
    describe: 'how long arrivals go on: 60s, 2m, 500ms or seconds',
    defaultDescription: '30s',
  },
  grace: {
    type: 'string',
    group: RUN,
    describe: 'after --duration, how long running requests may finish before they are cut',
    defaultDescription: '30s',
  },
  preset: {
    type: 'string',
    choices: PRESET_NAMES,
    group: CONFIGURATIONS,
    describe: "a peer's published benchmark, run as published (its fleet, workload and arms) on the virtual clock (docs/bench.md §Presets)",
  },
  ...RUN_OPTIONS,
  ...FLEET_OPTIONS,
  ...TRACE_OPTIONS,
} as const satisfies Record<string, Options>;

/** `bench capture FILE`: a live router's traffic, recorded as a trace. */
export const BENCH_CAPTURE_OPTIONS = {
  url: { type: 'string', group: CAPTURE, describe: 'the routerctl router to listen to' },
  token: { ...ADMIN_TOKEN_OPTION, group: CAPTURE },
  duration: {
    type: 'string',
    default: '60s',
    group: CAPTURE,
    describe: 'how long to listen: 60s, 10m, or seconds (^C stops early and keeps what was seen)',
  },
  'trace-block-size': {
    ...TRACE_BLOCK_SIZE,
    group: CAPTURE,
    describe: "tokens per hash id in the trace written (a multiple of the router's --block-size)",
  },
  json: { type: 'boolean', default: false, group: CAPTURE, describe: 'print one JSON line about the file, nothing else' },
} as const satisfies Record<string, Options>;

/** The parsed flags `bench run` and `bench compare` both hand to the runners. */
export type BenchInputArgv = InferredOptionTypes<
  typeof WORKLOAD_OPTIONS & typeof RUN_OPTIONS & typeof FLEET_OPTIONS & typeof TRACE_OPTIONS
> & {
  duration: string | undefined;
  grace: string | undefined;
  'router-args': string;
};
