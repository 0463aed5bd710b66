/**
 * The project's performance suite, by name: what `npm run perf -- <name>` runs. Each
 * benchmark is its own program under perf/, started in a child process so that it
 * gets its own node flags (the prefix benchmark needs a callable gc) and its own heap.
 * BENCHMARKS.md publishes what each measures; perf/results/<name>.json holds its
 * latest figures.
 */
export interface PerfBenchmark {
  /** What `npm run perf -- <name>` takes, and the name of its results file. */
  readonly name: string;
  /** The compiled program, relative to dist/perf/. */
  readonly file: string;
  /** Node flags the benchmark needs, before the program's path. */
  readonly nodeFlags: readonly string[];
  /** One line: the question it answers. */
  readonly measures: string;
  /** Results it writes under a second name, for a mode of its own (perf/results/<name>.json). */
  readonly alsoWrites: readonly string[];
}

const benchmark = (
  name: string,
  file: string,
  measures: string,
  nodeFlags: readonly string[] = [],
  alsoWrites: readonly string[] = [],
): PerfBenchmark => ({
  name,
  file,
  nodeFlags,
  measures,
  alsoWrites,
});

/** The benchmark that writes perf/results/<result>.json; undefined for a file no benchmark writes. */
export const benchmarkWriting = (result: string): PerfBenchmark | undefined =>
  PERF_BENCHMARKS.find((b) => b.name === result || b.alsoWrites.includes(result));

export const PERF_BENCHMARKS: readonly PerfBenchmark[] = [
  benchmark(
    'routing',
    'routing-quality.js',
    'routing quality on shared-prefix chat: what --worker-queue-limit buys (bench --compare); --set peers: beside smg and vllm-router',
    [],
    ['peers-routing-hot-prefix', 'peers-routing-flat', 'peers-routing-gsp', 'peers-routing-hot-prefix-seeds'],
  ),
  benchmark('overhead', 'router-overhead.js', "the router's own cost against a bare proxy: rate, added latency, CPU per request, ramp"),
  benchmark(
    'peers-llm-d',
    'peer-engines.js',
    'routing quality beside smg and vllm-router in front of three llm-d-inference-sim engines: cached tokens, TTFT, goodput (needs the peers)',
  ),
  benchmark(
    'epp',
    'epp.js',
    "the endpoint picker: its decision time per request, and Envoy + picker's rate against serve in proxy mode on the same upstreams (needs the peers)",
  ),
  benchmark(
    'aiperf',
    'aiperf.js',
    "an independent client: AIPerf's TTFT and latency percentiles beside bench run's, same requests, same target (needs the peers)",
  ),
  benchmark(
    'peers',
    'peer-routers.js',
    'the request path beside smg and vllm-router (cache_aware) and a bare proxy: rate, CPU and added latency per prompt size (needs the peers)',
  ),
  benchmark(
    'peers-fleet',
    'peer-fleet.js',
    '1,024 and 4,096 workers behind routerctl, smg and vllm-router: start, idle CPU, p50/p99 at 8 connections, /metrics (needs the peers)',
  ),
  benchmark('second-process', 'second-process.js', 'what a second router process would give on this machine (needs wrk)'),
  benchmark('prefix', 'prefix-match.js', "prefix key and match per request, 1K-100K tokens; the index's memory at 1M blocks", [
    '--expose-gc',
  ]),
  benchmark('selection', 'selection.js', 'prefix match + cache-aware selection per request, pools of 8, 128 and 1,024 workers'),
  benchmark('sim', 'sim-engine.js', 'requests per second one `routerctl sim` engine process sustains'),
  benchmark(
    'sim-fidelity',
    'sim-fidelity.js',
    'routerctl sim beside llm-d-inference-sim, same workload: metrics lag, refusals, queues (needs the peer)',
  ),
  benchmark('console', 'console-overhead.js', 'router throughput with and without a console on /admin/stream'),
  benchmark('console-cpu', 'console-cpu.js', "the console's own CPU in a terminal of each size (needs tmux)", [], ['console-cpu-fleet']),
  benchmark('prometheus', 'prometheus-parse.js', 'parse time of a 2,000-line Prometheus exposition'),
  benchmark('soak', 'soak.js', "a soak with engine faults: answered, lost, the router's memory trend"),
  benchmark(
    'prediction',
    'prefix-prediction.js',
    'does a request go to the engine holding its longest prefix (index from requests or events)',
  ),
  benchmark('event-gap', 'event-gap.js', 'what waiting for BlockStored costs, with and without predicted prefixes'),
  benchmark(
    'replicas',
    'replica-agreement.js',
    'do two replicas agree on who holds what; --late (replicas-late.json): how soon a late replica agrees',
    [],
    ['replicas-late'],
  ),
  benchmark('load-push', 'load-push-latency.js', "from an engine's queue change to the router's load table: push against poll"),
  benchmark('push', 'push-decode.js', 'decoding cost of KV-event and LoadStat frames'),
  benchmark('tokenizer', 'tokenizer-keying.js', "keying by the model's tokens: chat template, tokenizer, SGLang page hashes"),
  benchmark('decisions', 'decision-record.js', 'CPU and memory of one decision record'),
  benchmark('trace', 'trace-virtual.js', 'how fast a 10,000-request trace replays on the virtual clock'),
  benchmark('trace-clocks', 'trace-clocks.js', 'one trace on the virtual and on the wall clock: how far apart they land'),
  benchmark('trace-conversations', 'trace-conversations.js', "a trace with Mooncake's conversation statistics, past the fleet's capacity"),
  benchmark('ceiling', 'ceiling-share.js', "how close round robin and cache_aware come to the conversation trace's infinite-cache ceiling"),
  benchmark(
    'recommend',
    'recommend-check.js',
    "does bench compare --recommend's held-out check agree with its pick, at 80, 95 and 110 % of saturation",
  ),
  benchmark('start-up', 'start-up.js', "`routerctl --version` and every command's `--help`, start to exit, against a bare node start"),
  benchmark(
    'gate-sweep',
    'gate-sweep.js',
    'where a fixed --worker-queue-limit loses goodput: seven gate arms at 80, 95 and 110 % of capacity, running caps 16 and 256',
  ),
  benchmark(
    'fleet-scale',
    'fleet-scale.js',
    'a router in front of 4,096 workers against 8: idle polling CPU, latency, /metrics, /admin/state, stream, memory',
  ),
  benchmark(
    'fleet-push',
    'fleet-push.js',
    'an idle router in front of 4,096 workers pushing LoadStat, against the same fleet polled: CPU, memory',
  ),
  benchmark(
    'gc-mode',
    'gc-mode.js',
    'which garbage-collector mode router processes settle in under traffic over 4,096 workers (--router-node-flags "--allocation-site-pretenuring": with V8\'s pretenuring; --bare: the bare proxy on its pool beside)',
  ),
  benchmark(
    'gate-modes',
    'gate-modes.js',
    'the gate modes side by side: fixed limits, the floor, --queue-gate auto and llm-d τ on a trace, b2b-saas and gsp',
    [],
    ['gate-modes-trace2'],
  ),
  benchmark(
    'slo-modes',
    'slo-modes.js',
    'the TTFT goal as the one knob: --queue-gate slo and --admission slo beside plain cache_aware and the fixed limits',
    [],
    ['slo-modes-trace2'],
  ),
];
