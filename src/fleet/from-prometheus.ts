import { histogramSeries, parsePrometheusText } from '../prometheus/index.js';
import type { ParsedFamily } from '../prometheus/index.js';
import type { Breaker, DecisionCounts, Histogram, ReplicaSnapshot, WorkerSnapshot } from './view-model.js';
import { DECISION_LABELS, emptyRouterInfo } from './view-model.js';

/** Why a /metrics page is not a router's, for the one-line error. */
export class NotARouterMetricsError extends Error {
  constructor(readonly looksLike: 'sglang-engine' | 'vllm-engine' | 'other') {
    super(
      looksLike === 'sglang-engine'
        ? 'this is an SGLang engine\'s /metrics (sglang: names), not a router\'s; point --url at the router'
        : looksLike === 'vllm-engine'
          ? 'this is a vLLM engine\'s /metrics (vllm: names), not a router\'s; point --url at the router'
          : 'its /metrics has no sgl_router_* metrics',
    );
    this.name = 'NotARouterMetricsError';
  }
}

/**
 * Map a router's Prometheus exposition into the console's snapshot. The names are the
 * Rust sgl-router's plus routerctl's additions
 * (docs/metrics-and-admin.md §Metric families); whatever a page lacks becomes `null`
 * and is listed in `blind`, so the header can say what this source cannot show. Per-worker series are keyed by `worker_url` (the Rust router's label)
 * or `worker` (routerctl's), which name the same worker.
 */
export function snapshotFromPrometheus(text: string, receivedAt: number = Date.now()): ReplicaSnapshot {
  const fams = parsePrometheusText(text);
  const has = (name: string): boolean => family(fams, name) !== undefined;
  if (![...fams.keys()].some((n) => n.startsWith('sgl_router_'))) {
    const names = [...fams.keys()];
    throw new NotARouterMetricsError(
      names.some((n) => n.startsWith('sglang:')) ? 'sglang-engine' : names.some((n) => n.startsWith('vllm:')) ? 'vllm-engine' : 'other',
    );
  }

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
  const eachWorker = (name: string, set: (w: WorkerSnapshot, v: number) => void): void => {
    for (const s of values(family(fams, name))) {
      const w = worker(s.labels);
      if (w) set(w, s.value);
    }
  };

  eachWorker('sgl_router_worker_inflight_requests', (w, v) => (w.inflight = v));
  eachWorker('sgl_router_worker_health', (w, v) => (w.healthy = v === 1));
  eachWorker('sgl_router_worker_cb_state', (w, v) => (w.breaker = breakerFromGauge(v)));
  eachWorker('sgl_router_worker_waiting_requests', (w, v) => (w.waiting = v));
  eachWorker('sgl_router_worker_load_sample_age_seconds', (w, v) => (w.sampleAgeMs = Math.round(v * 1000)));
  eachWorker('sgl_router_worker_requests_total', (w, v) => (w.requestsTotal = (w.requestsTotal ?? 0) + v));
  eachWorker('sgl_router_queue_gate_rejected_total', (w, v) => (w.gateRejectionsTotal = (w.gateRejectionsTotal ?? 0) + v));
  const hasGateRejections = has('sgl_router_queue_gate_rejected_total');
  if (hasGateRejections) for (const w of workers.values()) w.gateRejectionsTotal ??= 0;

  // Decisions, summed over model_id: the console shows one fleet.
  const decFam = family(fams, 'sgl_router_cache_aware_decisions_total');
  let decisions: DecisionCounts | null = null;
  const models = new Set<string>();
  if (decFam) {
    decisions = Object.fromEntries(DECISION_LABELS.map((d) => [d, 0])) as DecisionCounts;
    for (const s of values(decFam)) {
      const d = s.labels.decision as keyof DecisionCounts | undefined;
      if (d !== undefined && d in decisions) decisions[d] += s.value;
      if (s.labels.model_id !== undefined) models.add(s.labels.model_id);
    }
  }

  let diverted: Histogram | null = null;
  const divFam = family(fams, 'sgl_router_diverted_overlap_blocks');
  if (divFam) {
    const byLe = new Map<number, number>();
    let count = 0;
    let sum = 0;
    for (const h of histogramSeries(divFam)) {
      for (const b of h.buckets) if (Number.isFinite(b.le)) byLe.set(b.le, (byLe.get(b.le) ?? 0) + b.count);
      if (Number.isFinite(h.count)) count += h.count;
      if (Number.isFinite(h.sum)) sum += h.sum;
      if (h.labels.model_id !== undefined) models.add(h.labels.model_id);
    }
    diverted = { buckets: [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c })), count, sum };
  }

  const inertFam = family(fams, 'sgl_router_queue_gate_inert');
  const inert = inertFam ? values(inertFam).some((s) => s.value === 1) : null;

  const router = emptyRouterInfo();
  router.policy = inferPolicy(fams);
  router.policyInferred = router.policy !== null;
  router.modelId = models.size > 0 ? [...models].sort().join(', ') : null;
  const start = sum(family(fams, 'process_start_time_seconds'));
  if (start !== null && start > 0) router.uptimeS = Math.max(0, Math.round(receivedAt / 100 - start * 10) / 10);

  const list = [...workers.values()];
  const blind: string[] = [];
  if (!list.some((w) => w.waiting !== null)) blind.push('engine queues');
  if (!list.some((w) => w.sampleAgeMs !== null)) blind.push('sample age');
  blind.push('queue limit', 'gated workers');
  if (!hasGateRejections) blind.push('gate rejections');
  if (inertFam === undefined) blind.push('gate-inert alert');
  blind.push('all_queued alert (inferred from decisions)');

  return {
    source: 'prometheus',
    at: receivedAt,
    router,
    workers: list,
    decisions,
    selectionFailuresTotal: family(fams, 'sgl_router_policy_selection_failures_total') ? (sum(family(fams, 'sgl_router_policy_selection_failures_total')) ?? 0) : null,
    diverted,
    partialDiversionsTotal: sum(family(fams, 'sgl_router_partial_diversions_total')),
    requestsTotal: requestsTotal(fams),
    gateRejectionsTotal: hasGateRejections ? (sum(family(fams, 'sgl_router_queue_gate_rejected_total')) ?? 0) : null,
    alerts: { allQueued: null, gateInert: inert },
    blind,
  };
}

/** A counter may be exposed as `x_total` (0.0.4) or as family `x` with `x_total` samples (OpenMetrics). */
function family(fams: Map<string, ParsedFamily>, name: string): ParsedFamily | undefined {
  return fams.get(name) ?? (name.endsWith('_total') ? fams.get(name.slice(0, -6)) : undefined);
}

/** The family's value samples (not buckets, sums or counts). */
function values(f: ParsedFamily | undefined): ParsedFamily['samples'] {
  if (!f) return [];
  return f.samples.filter((s) => s.name === f.name || s.name === `${f.name}_total`);
}

function sum(f: ParsedFamily | undefined): number | null {
  const v = values(f);
  return v.length === 0 ? null : v.reduce((a, s) => a + s.value, 0);
}

/** Intake: POSTs to the generation routes (both routers count them per route and method). */
function requestsTotal(fams: Map<string, ParsedFamily>): number | null {
  const f = family(fams, 'sgl_router_requests_total');
  if (!f) return null;
  return values(f)
    .filter((s) => s.labels.method === undefined || s.labels.method === 'POST')
    .reduce((a, s) => a + s.value, 0);
}

/** The policy whose label dominates the decision counters; cache_aware when it books cache decisions. */
function inferPolicy(fams: Map<string, ParsedFamily>): string | null {
  const tally = new Map<string, number>();
  for (const name of ['sgl_router_policy_decisions_total', 'sgl_router_policy_selection_failures_total']) {
    for (const s of values(family(fams, name))) {
      const p = s.labels.policy;
      if (p !== undefined) tally.set(p, (tally.get(p) ?? 0) + s.value);
    }
  }
  if (tally.size === 0) {
    const dec = family(fams, 'sgl_router_cache_aware_decisions_total');
    return dec && values(dec).some((s) => s.value > 0) ? 'cache_aware' : null;
  }
  return [...tally.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

function breakerFromGauge(v: number): Breaker | null {
  return v === 0 ? 'closed' : v === 1 ? 'open' : v === 2 ? 'half_open' : null;
}
