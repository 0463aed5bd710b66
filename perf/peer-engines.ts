/**
 * Routing quality beside the peer routers in front of engines none of them wrote: three
 * llm-d-inference-sim engines (docs/peers.md §llm-d-inference-sim), a fresh fleet per arm,
 * driven by `bench run --url` with the hot-prefix chat. llm-d's engine charges prefill
 * per uncached token and reports `cached_tokens` in whole blocks, so where a router sends
 * a prompt shows in both figures without routerctl's simulator.
 *
 *   npm run perf -- peers-llm-d [--duration 40] [--warmup 10] [--rate 26]
 *
 * Arms: routerctl round robin; routerctl `cache_aware` at its defaults, with the gate at
 * 2 and no capacity admission, and fed by the engines' KV events; the peer routers'
 * `cache_aware` at their defaults, smg also with its own gate off. Each arm: engines
 * started fresh (empty caches), the router, the same arrivals (bench's digest is
 * checked), engines and router stopped.
 */
import { PEER_ROUTER_NAMES, peerRouterMissing, startPeerRouter, startRouterProcess } from '../src/bench/index.js';
import type { PeerRouterName } from '../src/bench/index.js';
import { benchArg } from './support/args.js';
import { startLlmdFleet } from './support/llmd-fleet.js';
import type { LlmdFleet } from './support/llmd-fleet.js';
import { routerctlJson } from './support/processes.js';
import { writeResult } from './support/results.js';
import type { Figures } from './support/results.js';

const durationS = Number(benchArg('duration', '40'));
const warmupS = Number(benchArg('warmup', '10'));
const rate = Number(benchArg('rate', '26'));

/** The hot-prefix chat of `routing --shape hot-prefix` (BENCHMARKS.md section 1), at a rate these engines bear. */
const CHAT = 'families=16,zipf=1.1,system-tokens=1000-4000,sessions=128,turns=4,output-tokens=48,burst=3x3s/15s';
/** Per request: routerctl sim's step costs at --speedup 0.5 (perf/sim-fidelity.ts); 8 running, the rest wait. */
const ENGINES = {
  engines: 3,
  maxNumSeqs: 8,
  maxWaiting: 1000,
  kvBlocks: 512,
  prefillOverhead: '11.5ms',
  prefillPerToken: '34.5us',
  interToken: '11.6ms',
};

interface Arm {
  readonly key: string;
  readonly label: string;
  readonly kvEvents?: boolean;
  /** Start the router in front of the fleet; resolves with its URL and how to stop it. */
  start(fleet: LlmdFleet): Promise<{ url: string; stop: () => Promise<void> }>;
}

const routerctl = (key: string, label: string, args: string[], kvEvents = false): Arm => ({
  key,
  label,
  kvEvents,
  async start(fleet) {
    const events = fleet.kvEventsJson !== undefined ? ['--kv-events', fleet.kvEventsJson, '--tokenizer', 'llm-d-inference-sim:dummy'] : [];
    const r = await startRouterProcess(fleet.urls, [...args, ...events]);
    return { url: r.value, stop: () => r.process.stop({ signals: 2, killAfterMs: 2000 }) };
  },
});

const peer = (name: PeerRouterName, key: string, label: string, extra: string[] = []): Arm => ({
  key,
  label,
  async start(fleet) {
    const r = await startPeerRouter(name, { workerUrls: fleet.urls, extra });
    return { url: r.url, stop: () => r.close() };
  },
});

const missing = PEER_ROUTER_NAMES.filter((n) => peerRouterMissing(n) !== null);
for (const n of missing) console.log(`left out: ${peerRouterMissing(n)}`);
const arms: Arm[] = [
  routerctl('routerctl_round_robin', 'routerctl round_robin', ['--policy', 'round_robin']),
  routerctl('routerctl_cache_aware', 'routerctl cache_aware', ['--policy', 'cache_aware']),
  routerctl('routerctl_no_admission_gate_2', 'routerctl cache_aware, no capacity admission, gate 2', [
    ...['--policy', 'cache_aware', '--capacity-admission', 'off', '--worker-queue-limit', '2'],
  ]),
  routerctl('routerctl_events', 'routerctl cache_aware, KV events', ['--policy', 'cache_aware'], true),
  ...(missing.includes('smg')
    ? []
    : [
        peer('smg', 'smg', 'smg cache_aware'),
        peer('smg', 'smg_gate_off', 'smg cache_aware, own gate off', ['--disable-worker-overload-protection']),
      ]),
  ...(missing.includes('vllm-router') ? [] : [peer('vllm-router', 'vllm_router', 'vllm-router cache_aware')]),
];

interface BenchReport {
  summary: {
    ttft_ms: { p50: number; p99: number };
    cache: { ratio: number | null };
    goodput: { ratio: number | null };
    requests: { ok: number; failed: number };
    throughput: { requests_per_s: number };
    errors: { by_status: Record<string, number>; by_cause: Record<string, number> };
  };
  arrivals: { count: number; digest: string };
}

function bench(url: string): BenchReport {
  const args = [
    ...['bench', 'run', '--url', url, '--model-name', 'tiny', '--chat', CHAT, '--rate', String(rate), '--seed', '7'],
    ...['--duration', `${durationS}s`, '--warmup', `${warmupS}s`, '--grace', '30s', '--json'],
  ];
  return routerctlJson<BenchReport>(args);
}

const figures: Figures = { engines: ENGINES.engines, rate_per_s: rate, duration_s: durationS, warmup_s: warmupS };
let digest: string | undefined;
for (const arm of arms) {
  const fleet = await startLlmdFleet({ ...ENGINES, kvEvents: arm.kvEvents ?? false });
  let report: BenchReport;
  try {
    const router = await arm.start(fleet);
    try {
      report = bench(router.url);
    } finally {
      await router.stop();
    }
  } finally {
    await fleet.stop();
  }
  digest ??= report.arrivals.digest;
  if (report.arrivals.digest !== digest) throw new Error(`${arm.label} was offered other arrivals than the first arm`);
  const s = report.summary;
  const pct = (x: number | null): number | null => (x === null ? null : Math.round(x * 1000) / 10);
  Object.assign(figures, {
    [`${arm.key}_cached_pct`]: pct(s.cache.ratio),
    [`${arm.key}_goodput_pct`]: pct(s.goodput.ratio),
    [`${arm.key}_ttft_p50_ms`]: s.ttft_ms.p50,
    [`${arm.key}_ttft_p99_ms`]: s.ttft_ms.p99,
    [`${arm.key}_requests_per_s`]: s.throughput.requests_per_s,
    [`${arm.key}_failed`]: s.requests.failed,
  });
  console.log(
    `${arm.label}: cached ${pct(s.cache.ratio)} %, goodput ${pct(s.goodput.ratio)} %, TTFT p50 ${s.ttft_ms.p50} p99 ${s.ttft_ms.p99} ms, ` +
      `${s.throughput.requests_per_s} req/s, ${s.requests.failed} failed ${JSON.stringify(s.errors.by_status)} ${JSON.stringify(s.errors.by_cause)}`,
  );
  figures[`${arm.key}_failures`] = Object.entries({ ...s.errors.by_status, ...s.errors.by_cause })
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}
figures.arrivals = digest?.slice(0, 16) ?? null;
writeResult('peers-llm-d', {
  figures,
  bottleneck: 'the engines: 3 llm-d-inference-sim processes at their running caps of 8; client and router share the 2 cores with them',
});
