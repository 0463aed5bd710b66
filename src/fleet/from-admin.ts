import { ROUTER_FIELDS, WORKER_FIELDS, readFields } from '../contract/index.js';
import type { AdminState, AdminWorker } from '../contract/index.js';
import type { DecisionCounts, Histogram, ReplicaSnapshot, WorkerSnapshot } from './view-model.js';
import { DECISION_LABELS, sumKnown } from './view-model.js';

/**
 * Map an admin state document (GET /admin/state, or one /admin/stream event;
 * docs/metrics-and-admin.md §Admin state document) into the console's snapshot. The
 * document comes over the network from a router of unknown version, so every field
 * is checked: a missing or mistyped field becomes `null` (unknown), and a document
 * without `router` and `workers` is not admin state at all (returns undefined, so
 * `auto` can fall back to Prometheus).
 */
export function snapshotFromAdmin(raw: unknown, receivedAt: number = Date.now()): ReplicaSnapshot | undefined {
  // Read through the contract's field tables: each field is checked against its kind
  // (absent stays undefined, mistyped reads null), and a field the router does not
  // write is a compile error.
  if (!isObject(raw) || !isObject(raw.router) || !Array.isArray(raw.workers)) return undefined;
  const doc = raw as Fields<AdminState>;
  const r = readFields(ROUTER_FIELDS, raw.router);
  const workers: WorkerSnapshot[] = [];
  for (const item of raw.workers) {
    if (!isObject(item) || typeof item.url !== 'string') continue;
    const w = readFields(WORKER_FIELDS, item);
    workers.push({
      url: item.url,
      healthy: w.healthy ?? null,
      breaker: w.breaker ?? null,
      waiting: w.waiting ?? null,
      running: w.running ?? null,
      sampleAgeMs: w.sample_age_ms ?? null,
      loadSource: w.load_source ?? null,
      fresh: w.fresh ?? null,
      gated: w.gated ?? null,
      inflight: w.inflight ?? null,
      requestsTotal: w.requests_total ?? null,
      gateRejectionsTotal: w.gate_rejections_total ?? null,
      ...(w.kv_usage !== undefined ? { kvUsage: w.kv_usage } : {}),
      ...(isObject(w.prefill) ? { prefillTokensPerS: w.prefill.tokens_per_second ?? null } : {}),
      ...(w.latency ? { ttft: histogram(w.latency.ttft_seconds), duration: histogram(w.latency.duration_seconds) } : {}),
    });
  }
  const alerts: Fields<AdminState['alerts']> = isObject(doc.alerts) ? doc.alerts : {};
  const index = isObject(doc.prefix_index) ? (doc.prefix_index as Fields<AdminState['prefix_index']>) : undefined;
  return {
    source: 'admin',
    at: num(doc.timestamp_ms) ?? receivedAt,
    router: {
      version: r.version ?? null,
      policy: r.policy ?? null,
      policyInferred: false,
      modelId: r.model_id ?? null,
      // The limit in force, which an auto gate moves; routers before the gate modes report only the flag.
      workerQueueLimit: r.queue_gate_limit !== undefined ? r.queue_gate_limit : (r.worker_queue_limit ?? null),
      gateMode: r.queue_gate_mode ?? null,
      // Only the tokens gate has a token threshold; elsewhere the field is absent, not unknown.
      ...(r.queue_gate_mode === 'tokens' ? { gateTokens: r.queue_gate_tokens ?? null } : {}),
      // The TTFT goal and admission, from routers that have them.
      ...(r.ttft_slo_ms !== undefined && r.ttft_slo_ms !== null ? { ttftSloMs: r.ttft_slo_ms } : {}),
      ...(r.admission !== undefined ? { admission: r.admission } : {}),
      saturationQueueFloor: r.saturation_queue_floor ?? null,
      minLoadChoices: r.min_load_choices ?? null,
      uptimeS: r.uptime_s ?? null,
      simulated: r.simulated === true,
      loadFreshnessMs: r.load_freshness_ms ?? null,
      blockSize: r.block_size ?? null,
      ready: r.ready ?? null,
    },
    workers,
    decisions: decisions(doc.decisions),
    selectionFailuresTotal: num(doc.selection_failures_total),
    diverted: histogram(doc.diverted_overlap_blocks),
    partialDiversionsTotal: num(doc.partial_diversions_total),
    requestsTotal: num(doc.requests_total) ?? sumKnown(workers.map((w) => w.requestsTotal)),
    gateRejectionsTotal: num(doc.gate_rejections_total) ?? sumKnown(workers.map((w) => w.gateRejectionsTotal)),
    alerts: { allQueued: bool(alerts.all_queued), gateInert: bool(alerts.gate_inert) },
    events: Array.isArray(doc.events)
      ? doc.events.flatMap((e) =>
          isObject(e) && typeof e.message === 'string' && typeof e.kind === 'string'
            ? [{ atMs: num(e.at_ms) ?? 0, kind: e.kind, worker: str(e.worker), message: e.message }]
            : [],
        )
      : [],
    ttft: isObject(doc.latency) ? histogram((doc.latency as Record<string, unknown>).ttft_seconds) : null,
    duration: isObject(doc.latency) ? histogram((doc.latency as Record<string, unknown>).duration_seconds) : null,
    prefixIndex:
      index && typeof index.digest === 'string' && typeof index.source === 'string'
        ? { source: index.source, blocks: num(index.blocks), digest: index.digest, notes: kvNotes(raw.workers) }
        : null,
    blind: [],
  };
}

function decisions(v: unknown): DecisionCounts | null {
  if (!isObject(v)) return null;
  const out = {} as DecisionCounts;
  for (const d of DECISION_LABELS) out[d] = num(v[d]) ?? 0;
  return out;
}

/**
 * Histograms read before, by the document object they were read from: on a delta
 * stream an unchanged worker keeps its `latency` objects (docs/metrics-and-admin.md
 * §Stream deltas), so each is read once, not once per event for every worker.
 */
const histograms = new WeakMap<object, Histogram | null>();

function histogram(v: unknown): Histogram | null {
  if (!isObject(v)) return null;
  const hit = histograms.get(v);
  if (hit !== undefined) return hit;
  const h = readHistogram(v);
  histograms.set(v, h);
  return h;
}

function readHistogram(v: Record<string, unknown>): Histogram | null {
  if (!Array.isArray(v.buckets)) return null;
  const buckets: Histogram['buckets'] = [];
  for (const b of v.buckets) {
    if (!isObject(b)) continue;
    const le = num(b.le);
    const count = num(b.count);
    // JSON cannot carry +Inf; the total is `count`.
    if (le !== null && count !== null) buckets.push({ le, count });
  }
  buckets.sort((a, b) => a.le - b.le);
  return { buckets, count: num(v.count) ?? buckets.at(-1)?.count ?? 0, sum: num(v.sum) ?? 0 };
}

/** A document from the network: the contract's keys, values not yet checked. */
type Fields<T> = Partial<Record<keyof T, unknown>>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Each worker's note on its part of an events index (a partial catch-up, no replay socket), as `URL: note`. */
function kvNotes(workers: unknown[]): string[] {
  const out: string[] = [];
  for (const item of workers) {
    if (!isObject(item) || typeof item.url !== 'string' || !isObject(item.kv_events)) continue;
    const note = (item.kv_events as Fields<NonNullable<AdminWorker['kv_events']>>).note;
    if (typeof note === 'string') out.push(`${item.url}: ${note}`);
  }
  return out;
}
