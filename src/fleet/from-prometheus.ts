import { METRIC_NAMES } from '../contract/index.js';
import type { MetricName } from '../contract/index.js';
import { ENGINE_RUNNING_FAMILY, ENGINE_TOKEN_USAGE_FAMILY, RouterMetricsPage } from './router-metrics-page.js';
import type { RouterDialect } from './router-metrics-page.js';
import type { Breaker, OwnCounter, ReplicaSnapshot, WorkerSnapshot } from './view-model.js';
import { emptyRouterInfo } from './view-model.js';

/**
 * Map a router's Prometheus exposition into the console's snapshot. The names are the
 * Rust sgl-router's plus routerctl's additions
 * (docs/metrics-and-admin.md §Metric families), or the classic router's and the model
 * gateway's (docs/metrics-and-admin.md §Other routers' metrics); whatever a page lacks becomes `null`
 * and is listed in `blind`, so the header can say what this source cannot show. Per-worker series are keyed by `worker_url` (the Rust router's label)
 * or `worker` (routerctl's), which name the same worker.
 */
export function snapshotFromPrometheus(text: string, receivedAt: number = Date.now()): ReplicaSnapshot {
  const page = RouterMetricsPage.parse(text);

  const workers = new Map<string, WorkerSnapshot>();
  const worker = (labels: Record<string, string>): WorkerSnapshot | undefined => {
    const url = labels.worker_url ?? labels.worker;
    if (url === undefined) return undefined;
    let w = workers.get(url);
    if (!w) {
      w = {
        url,
        healthy: null,
        breaker: null,
        waiting: null,
        running: null,
        sampleAgeMs: null,
        loadSource: null,
        fresh: null,
        gated: null,
        inflight: null,
        requestsTotal: null,
        gateRejectionsTotal: null,
      };
      workers.set(url, w);
    }
    return w;
  };
  const eachWorker = (name: MetricName, set: (w: WorkerSnapshot, v: number) => void): void => {
    for (const s of page.values(name)) {
      const w = worker(s.labels);
      if (w) set(w, s.value);
    }
  };

  // The classic router and the model gateway set a removed worker's health and breaker gauges to -1 and keep the series.
  const removed = new Set<string>();
  eachWorker(METRIC_NAMES.workerInflight, (w, v) => (w.inflight = v));
  eachWorker(METRIC_NAMES.workerHealth, (w, v) => (v < 0 ? removed.add(w.url) : (w.healthy = v === 1)));
  eachWorker(METRIC_NAMES.workerBreakerState, (w, v) => (v < 0 ? removed.add(w.url) : (w.breaker = breakerFromGauge(v))));
  // One sample per worker from routerctl; one per DP rank from the model gateway's engine gauges.
  eachWorker(METRIC_NAMES.workerWaiting, (w, v) => (w.waiting = (w.waiting ?? 0) + v));
  for (const s of page.foreign(ENGINE_RUNNING_FAMILY)) {
    const w = worker(s.labels);
    if (w) w.running = (w.running ?? 0) + s.value;
  }
  // The model gateway's engine token usage is a share per DP rank: the worker's is their mean.
  const usage = new Map<string, number[]>();
  for (const s of page.foreign(ENGINE_TOKEN_USAGE_FAMILY)) {
    const w = worker(s.labels);
    if (w && s.value >= 0) usage.set(w.url, [...(usage.get(w.url) ?? []), s.value]);
  }
  for (const [url, shares] of usage) workers.get(url)!.kvUsage = Math.min(1, shares.reduce((a, b) => a + b, 0) / shares.length);
  eachWorker(METRIC_NAMES.workerSampleAge, (w, v) => (w.sampleAgeMs = Math.round(v * 1000)));
  eachWorker(METRIC_NAMES.workerPrefillRate, (w, v) => (w.prefillTokensPerS = v));
  eachWorker(METRIC_NAMES.workerRequests, (w, v) => (w.requestsTotal = (w.requestsTotal ?? 0) + v));
  eachWorker(METRIC_NAMES.gateRejected, (w, v) => (w.gateRejectionsTotal = (w.gateRejectionsTotal ?? 0) + v));
  const hasGateRejections = page.has(METRIC_NAMES.gateRejected);
  if (hasGateRejections) for (const w of workers.values()) w.gateRejectionsTotal ??= 0;

  const hasInert = page.has(METRIC_NAMES.queueGateInert);
  const inert = hasInert ? page.values(METRIC_NAMES.queueGateInert).some((s) => s.value === 1) : null;

  const router = emptyRouterInfo();
  const dialect = page.dialect();
  if (dialect === 'smg') router.foreign = 'Shepherd Model Gateway';
  else if (dialect === 'vllm-router') router.foreign = 'vLLM router';
  else if (dialect === 'sgl-router-classic') router.foreign = 'classic sgl-router';
  const own = ownCounters(page, OWN_COUNTERS[dialect]);
  if (own.length > 0) router.ownCounters = own;
  router.policy = inferPolicy(page);
  router.policyInferred = router.policy !== null;
  // The console shows one fleet: decisions and diversions are summed over model_id, and every model is named.
  const models = new Set([
    ...page.labelValues(METRIC_NAMES.cacheDecisions, 'model_id'),
    ...page.labelValues(METRIC_NAMES.divertedOverlap, 'model_id'),
  ]);
  router.modelId = models.size > 0 ? [...models].sort().join(', ') : null;
  const start = page.processStartTimeS();
  if (start !== null && start > 0) router.uptimeS = Math.max(0, Math.round(receivedAt / 100 - start * 10) / 10);

  for (const url of removed) workers.delete(url);
  const list = [...workers.values()];
  const ttft = page.histogram(METRIC_NAMES.ttft);
  const duration = page.histogram(METRIC_NAMES.requestDuration);
  const blind: string[] = [];
  if (duration === null) blind.push('latency');
  if (!list.some((w) => w.waiting !== null)) blind.push('engine queues');
  if (!list.some((w) => w.sampleAgeMs !== null)) blind.push('sample age');
  blind.push('queue limit', 'gated workers');
  if (!hasGateRejections) blind.push('gate rejections');
  if (!hasInert) blind.push('gate-inert alert');
  blind.push('all_queued alert (inferred from decisions)');

  return {
    source: 'prometheus',
    at: receivedAt,
    router,
    workers: list,
    decisions: page.decisions(),
    selectionFailuresTotal: page.has(METRIC_NAMES.selectionFailures) ? (page.total(METRIC_NAMES.selectionFailures) ?? 0) : null,
    diverted: page.histogram(METRIC_NAMES.divertedOverlap),
    partialDiversionsTotal: page.total(METRIC_NAMES.partialDiversions),
    requestsTotal: requestsTotal(page),
    gateRejectionsTotal: hasGateRejections ? (page.total(METRIC_NAMES.gateRejected) ?? 0) : null,
    alerts: { allQueued: null, gateInert: inert },
    prefixIndex: null,
    events: [],
    ttft,
    duration,
    blind,
  };
}

/**
 * Another router's own families worth an operator's eye, read under their real names
 * (taken from the running processes: test/prometheus/fixtures/*-1.13.0-*, *-0.1.17-*).
 */
const OWN_COUNTERS: Partial<Record<RouterDialect, ReadonlyArray<Omit<OwnCounter, 'counts'>>>> = {
  smg: [
    { metric: 'smg_workers_overloaded', by: null, means: 'workers its overload gate leaves out now' },
    { metric: 'smg_worker_overload_fallback_total', by: 'stage', means: 'every worker over: sent to the least loaded' },
    { metric: 'smg_worker_overload_shed_total', by: 'stage', means: 'every worker over: refused (503)' },
    { metric: 'smg_cache_aware_policy_branch_total', by: 'branch', means: 'cache_aware branches' },
  ],
  'vllm-router': [
    { metric: 'vllm_router_prefix_routing_decisions_total', by: 'outcome', means: 'cache_aware outcomes' },
    { metric: 'vllm_router_kv_routing_inputs_total', by: 'result', means: "where cache_aware's tokens came from" },
  ],
};

function ownCounters(page: RouterMetricsPage, wanted: ReadonlyArray<Omit<OwnCounter, 'counts'>> | undefined): OwnCounter[] {
  const out: OwnCounter[] = [];
  for (const w of wanted ?? []) {
    const samples = page.foreign(w.metric);
    if (samples.length === 0) continue;
    const counts: Record<string, number> = {};
    for (const s of samples) {
      const k = w.by === null ? '' : (s.labels[w.by] ?? '');
      counts[k] = (counts[k] ?? 0) + s.value;
    }
    out.push({ ...w, counts });
  }
  return out;
}

/** The generation routes, as routers that count every route (the vLLM router counts its /metrics scrapes too) name them. */
const GENERATION_ROUTES = new Set(['/generate', '/v1/chat/completions', '/v1/completions', '/v1/responses']);

/** Intake: POSTs to the generation routes (both routers count them per route and method). */
function requestsTotal(page: RouterMetricsPage): number | null {
  if (!page.has(METRIC_NAMES.requests)) return null;
  return page
    .values(METRIC_NAMES.requests)
    .filter((s) => s.labels.method === undefined || s.labels.method === 'POST')
    .filter((s) => s.labels.route === undefined || GENERATION_ROUTES.has(s.labels.route))
    .reduce((a, s) => a + s.value, 0);
}

/** The policy whose label dominates the decision counters; cache_aware when it books cache decisions. */
function inferPolicy(page: RouterMetricsPage): string | null {
  const tally = new Map<string, number>();
  for (const name of [METRIC_NAMES.policyDecisions, METRIC_NAMES.selectionFailures]) {
    for (const [p, n] of page.totalsBy(name, 'policy')) tally.set(p, (tally.get(p) ?? 0) + n);
  }
  if (tally.size === 0) return page.values(METRIC_NAMES.cacheDecisions).some((s) => s.value > 0) ? 'cache_aware' : null;
  return [...tally.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

function breakerFromGauge(v: number): Breaker | null {
  return v === 0 ? 'closed' : v === 1 ? 'open' : v === 2 ? 'half_open' : null;
}
