import type { AdminDecision } from '../contract/index.js';
import { DECISIONS } from '../contract/index.js';
import type { Decision } from '../contract/index.js';

/**
 * The console's view of a fleet, independent of where it came from. Both sources (the
 * admin API and a Prometheus /metrics page) are mapped into `ReplicaSnapshot`; several
 * router replicas are merged into one `FleetView`. `null` always means "this source
 * cannot tell", never zero, so the console can say so instead of drawing a healthy 0.
 */

/** Where a snapshot came from: a router's admin API, a router's /metrics, or a bare engine (top --engines). */
export type SourceKind = 'admin' | 'prometheus' | 'engine';
export type SourceChoice = SourceKind | 'auto';
export type Breaker = 'closed' | 'open' | 'half_open';

export const DECISION_LABELS = DECISIONS;
export type DecisionLabel = Decision;
export type DecisionCounts = Record<DecisionLabel, number>;

export interface Histogram {
  /** Cumulative counts at finite upper bounds, ascending (no +Inf entry; `count` is the total). */
  buckets: Array<{ le: number; count: number }>;
  count: number;
  sum: number;
}

export interface FleetEvent {
  atMs: number;
  kind: string;
  worker: string | null;
  message: string;
  /** The replica that reported it (merged views of several). */
  replica?: string;
}

/**
 * A quantile read off a histogram. `lowerBound`: it lies above the histogram's last
 * finite bound, and `value` is that bound, so the quantile is somewhere above it
 * (shown as "> 30s", never as the figure).
 */
export interface QuantileEstimate {
  value: number;
  lowerBound: boolean;
}

export interface LatencyQuantiles {
  ttftP50: QuantileEstimate | null;
  ttftP99: QuantileEstimate | null;
  e2eP50: QuantileEstimate | null;
  e2eP99: QuantileEstimate | null;
  /** Requests the end-to-end figures cover. */
  requests: number;
}

export interface RouterInfo {
  version: string | null;
  policy: string | null;
  /** The policy was read off metric labels, not reported by the router. */
  policyInferred: boolean;
  modelId: string | null;
  /** The waiting count at which a worker is queued, in force now (an auto gate moves it). */
  workerQueueLimit: number | null;
  /** --queue-gate, when the router reports it (docs/routing.md §Gate modes); null from routers without the modes. */
  gateMode?: 'fixed' | 'auto' | 'tokens' | 'slo' | null;
  /** --queue-gate-tokens in tokens mode. */
  gateTokens?: number | null;
  /** --ttft-slo-ms, what the slo gate and admission hold predictions to; absent or null when unset. */
  ttftSloMs?: number | null;
  /** --admission, when the router reports it. */
  admission?: 'off' | 'slo' | null;
  saturationQueueFloor: number | null;
  minLoadChoices: number | null;
  uptimeS: number | null;
  simulated: boolean;
  loadFreshnessMs: number | null;
  /** Tokens per prefix block, when the router reports it. */
  blockSize: number | null;
  /**
   * Whether the router takes new requests: false once it drains (its admin state's
   * `ready`, or a /readyz that says `draining`); absent or null when the source does not say.
   */
  ready?: boolean | null;
  /** Another router read from its /metrics: the classic sgl-router, the Shepherd Model Gateway or the vLLM router; absent for routerctl and the Rust router. */
  foreign?: ForeignRouter;
  /**
   * What another router counts that routerctl has no name for, under the router's own
   * metric names (docs/metrics-and-admin.md §Other routers' metrics): its own gate, its
   * cache-aware branches. Absent for routerctl and the Rust router.
   */
  ownCounters?: OwnCounter[];
}

export type ForeignRouter = 'classic sgl-router' | 'Shepherd Model Gateway' | 'vLLM router';

/** One family of another router's, summed by one label (or whole, when `by` is null). */
export interface OwnCounter {
  readonly metric: string;
  readonly by: string | null;
  /** Totals by the label's value, in order of first appearance; `{ "": n }` when `by` is null. */
  readonly counts: Readonly<Record<string, number>>;
  /** What it means, in a few words for the console. */
  readonly means: string;
}

export interface WorkerSnapshot {
  url: string;
  healthy: boolean | null;
  breaker: Breaker | null;
  waiting: number | null;
  running: number | null;
  sampleAgeMs: number | null;
  /** Whether the sample was pushed by the engine or polled; null when the source does not say. */
  loadSource: 'push' | 'poll' | null;
  fresh: boolean | null;
  gated: boolean | null;
  inflight: number | null;
  requestsTotal: number | null;
  gateRejectionsTotal: number | null;
  /** Share of the engine's KV cache in use (0..1); absent when the source does not say, null when unknown now. */
  kvUsage?: number | null;
  /** Prompt tokens per second the router learnt the engine prefills (docs/routing.md §Learned prefill rate); absent when the source does not say, null while cold. */
  prefillTokensPerS?: number | null;
  /** This worker's cumulative latency histograms at the router (seconds); absent when the source does not say. */
  ttft?: Histogram | null;
  duration?: Histogram | null;
}

/** One router replica at one moment, as one source saw it. */
export interface ReplicaSnapshot {
  source: SourceKind;
  /** Wall-clock ms of the snapshot (the router's clock when it reports one). */
  at: number;
  router: RouterInfo;
  workers: WorkerSnapshot[];
  decisions: DecisionCounts | null;
  selectionFailuresTotal: number | null;
  diverted: Histogram | null;
  partialDiversionsTotal: number | null;
  /** Requests the router took in (admin: dispatched to workers; Prometheus: POSTs received). */
  requestsTotal: number | null;
  gateRejectionsTotal: number | null;
  alerts: { allQueued: boolean | null; gateInert: boolean | null };
  /** The router's prefix index: what it is built from and its digest; null when the source does not say. */
  prefixIndex: {
    source: string;
    blocks: number | null;
    digest: string;
    /** One line per worker whose part of the index is or may be incomplete (a partial catch-up, no replay socket), as `URL: note`. */
    notes: string[];
  } | null;
  /** The router's recent fleet events, oldest first; empty when the source has none. */
  events: FleetEvent[];
  /** Cumulative latency histograms (seconds); null when the source does not say. */
  ttft: Histogram | null;
  duration: Histogram | null;
  /** What this source cannot show, in words for the header ("engine queues", …). */
  blind: string[];
  /**
   * Workers whose changes the router's last stream event had no room for: their counters
   * are an event or a few behind (docs/metrics-and-admin.md §Stream deltas). Absent when none.
   */
  behind?: number;
}

/** Per-second rates between two snapshots of the same replica; null where a counter is unknown or reset. */
export interface ReplicaRates {
  requestsPerS: number | null;
  decisionsPerS: DecisionCounts | null;
  selectionFailuresPerS: number | null;
  divertedPerS: number | null;
  gateRejectionsPerS: number | null;
  gateRejectionsPerSByWorker: Map<string, number>;
  /** The latency histograms of the requests within the window (bucket differences); null when unknown. */
  ttftWindow: Histogram | null;
  durationWindow: Histogram | null;
  /** The same per worker, for the ones whose source reports them. */
  latencyWindowByWorker: Map<string, { ttft: Histogram | null; duration: Histogram | null }>;
}

export interface ReplicaStatus {
  url: string;
  source: SourceKind | null;
  /** Whether the last attempt to read this replica succeeded. */
  live: boolean;
  error: string | null;
  snapshot: ReplicaSnapshot | null;
  rates: ReplicaRates | null;
  /** Local wall-clock ms when the last snapshot arrived. */
  receivedAt: number | null;
  /** The router's latest decision records from its stream, oldest first (admin source only); absent when none came. */
  decisions?: AdminDecision[];
}

export interface FleetWorker extends WorkerSnapshot {
  /** Router-local in-flight count as each replica sees it, in replica order (null: not seen there). */
  inflightByReplica: Array<number | null>;
  gateRejectionsPerS: number | null;
  /** Latency of the requests this worker served, over the rate window and since the routers started; null when no source reports it per worker. */
  latency: { window: LatencyQuantiles; overall: LatencyQuantiles } | null;
}

export interface FleetView {
  /** Local wall-clock ms of the newest snapshot. */
  at: number;
  /** The live replicas' latest decision records, oldest first (docs/decisions.md); empty without an admin source. */
  recentDecisions: AdminDecision[];
  replicas: ReplicaStatus[];
  router: RouterInfo;
  /** Settings the replicas disagree on, e.g. "worker_queue_limit". */
  mismatched: string[];
  /**
   * Latency quantiles (seconds) from the live replicas' histograms together: over the
   * rate window (`window`), and since the routers started (`overall`, for one-shot reads).
   */
  latency: { window: LatencyQuantiles; overall: LatencyQuantiles };
  /** Events of the live replicas, oldest first (each tagged with its replica when there are several). */
  events: FleetEvent[];
  /**
   * Whether the live replicas hold the same prefix index (equal digests); null with
   * fewer than two replicas that report one. `source` is what they build it from.
   */
  prefixIndex: {
    source: string | null;
    agree: boolean | null;
    /** The live replicas' notes on an incomplete index, each once, tagged with its replica when there are several. */
    notes: string[];
  };
  source: SourceKind | 'mixed' | null;
  blind: string[];
  /** Workers whose counters the live replicas' streams have not caught up with yet. */
  behind: number;
  workers: FleetWorker[];
  decisions: DecisionCounts | null;
  decisionsPerS: DecisionCounts | null;
  /** cache_hit / (cache_hit + cache_miss + cache_worker_queued): all_queued is saturation, not routing quality. */
  hitRatio: number | null;
  hitRatioRecent: number | null;
  selectionFailuresTotal: number | null;
  selectionFailuresPerS: number | null;
  requestsTotal: number | null;
  requestsPerS: number | null;
  gateRejectionsTotal: number | null;
  gateRejectionsPerS: number | null;
  partialDiversionsTotal: number | null;
  diverted: Histogram | null;
  divertedPerS: number | null;
  alerts: {
    allQueued: boolean | null;
    /** No replica reports the alert, but all_queued decisions were booked since the last snapshot. */
    allQueuedInferred: boolean;
    gateInert: boolean | null;
  };
  fleet: {
    /** Workers whose waiting count is known. */
    known: number;
    waitingTotal: number | null;
    waitingMin: number | null;
    waitingMax: number | null;
    inflightTotal: number | null;
  };
}

export function emptyRouterInfo(): RouterInfo {
  return {
    version: null,
    policy: null,
    policyInferred: false,
    modelId: null,
    workerQueueLimit: null,
    saturationQueueFloor: null,
    minLoadChoices: null,
    uptimeS: null,
    simulated: false,
    loadFreshnessMs: null,
    blockSize: null,
  };
}

/** The hit ratio that reflects routing quality: all_queued is left out (docs/metrics-and-admin.md §Routing hit rate). */
export function hitRatio(d: DecisionCounts | null): number | null {
  if (!d) return null;
  const denom = d.cache_hit + d.cache_miss + d.cache_worker_queued;
  return denom > 0 ? d.cache_hit / denom : null;
}

/** Sum of the known values; null when none is known (unknown is never zero). */
export function sumKnown(values: Array<number | null>): number | null {
  let total = 0;
  let any = false;
  for (const v of values) {
    if (v === null) continue;
    total += v;
    any = true;
  }
  return any ? total : null;
}
