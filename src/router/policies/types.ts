import type { PrefillEstimator } from './prefill-rate/index.js';
import type { POLICIES } from '../../config/index.js';
import type { Decision } from '../../contract/index.js';

/**
 * What a selection policy sees. Everything here is read-only and valid for one
 * synchronous selection: the router hands policies live views instead of copied
 * snapshots (nothing can change while a selection runs on the event loop), so the
 * hot path allocates nothing per fleet.
 */

/** A worker as policies see it. `slot` is a dense index, stable while the worker is registered. */
export interface PolicyWorker {
  /** Worker URL; also the final tie-break (string compare, ascending). */
  readonly id: string;
  readonly slot: number;
  /** Router-local in-flight requests (the Rust router's active_load). */
  readonly inflight: number;
  /** Its prefill rate as the router learnt it, and the prefill it has pending (docs/routing.md §Learned prefill rate). */
  readonly prefill?: PrefillEstimator;
}

/** A worker's engine-reported load, summed over DP ranks; present only when every rank is fresh. */
export interface BasicLoad {
  readonly running: number;
  readonly waiting: number;
  /** KV tokens in use. */
  readonly usedTokens: number;
  /** KV capacity in tokens; 0 when unknown. */
  readonly maxTotalTokens: number;
  /** Receive time of the oldest rank sample (ms, router clock). */
  readonly capturedAt: number;
  /**
   * Prompt tokens waiting to be prefilled (SGLang's num_waiting_uncached_tokens: uncached
   * under lpm, raw prompt lengths under fcfs), summed, when every rank reported them;
   * undefined when one did not (vLLM reports none). The one value the tokens gate reads,
   * wherever it is asked (the pool's counters, a selection, a decision record, the
   * admin document), so that none of them takes "not reported" for 0.
   */
  readonly queuedTokens: number | undefined;
}

/** Native scheduling data, for capacity admission and the pressure guard. */
export interface NativeLoad extends BasicLoad {
  readonly waitingUncachedTokens: number;
  readonly totalTokens: number;
  readonly maxRunningRequests: number;
  /** 1000 × waiting uncached tokens / prefill throughput, when the engine reports throughput. */
  readonly estimatedPrefillQueueMs: number | undefined;
}

export interface LoadView {
  /** Bumped on every change to the load table. */
  readonly version: number;
  /** The time the view was fixed at (router clock, ms), where the view has one: how old an engine's lateness is (docs/routing.md §Learned prefill rate). */
  readonly at?: number;
  /** Fresh basic aggregate, or undefined (no sample, stale, or a rank missing). The gate reads this. */
  basic(worker: PolicyWorker): BasicLoad | undefined;
  /** Fresh native aggregate, or undefined. Capacity admission and pressure read this. */
  native(worker: PolicyWorker): NativeLoad | undefined;
}

/**
 * Facts about the request's routable pool, maintained incrementally by the load
 * table so that whole-pool questions cost O(1) per request, never a fleet scan.
 * Counts use the router's queue gate (its limit and floor).
 */
export interface PoolState {
  /** The routable pool (healthy workers serving the model), in registration order. */
  readonly workers: readonly PolicyWorker[];
  /** Workers with a fresh basic sample. */
  readonly sampled: number;
  /** Workers with a fresh sample and waiting ≥ limit (0 when no limit is set). */
  readonly queued: number;
  /** Workers with a fresh sample and waiting < floor (0 when no floor is set). */
  readonly belowFloor: number;
  /** The gate-admitted tier: unsampled, or waiting < limit. All workers when no limit is set. */
  readonly unqueued: readonly PolicyWorker[];
}

/** One worker's match against the request's prefix. */
export interface PrefixMatch {
  readonly worker: PolicyWorker;
  /** Leading blocks of the request this worker holds (≥ 1). */
  readonly blocks: number;
}

/** The prefix index's answer for one request. */
export interface PrefixSignal {
  /** Blocks the request's prefix key has. */
  readonly queryBlocks: number;
  /** Workers holding at least one leading block, any order, no duplicates. */
  readonly matches: readonly PrefixMatch[];
}

/** Everything a policy needs for one selection. */
export interface SelectionContext {
  readonly pool: PoolState;
  readonly load: LoadView;
  /** Input tokens of the request (≥ 1): rendered prompt tokens, or an estimate from bytes. */
  readonly inputTokens: number;
  /** Absent when the router has no prefix key for the request. */
  readonly prefix: PrefixSignal | undefined;
  /** Uniform in [0, 1); injected so tests are deterministic. */
  readonly random: () => number;
  /**
   * A worker this selection must behave as if it were not in the pool: the worker a
   * retry is moving away from (docs/retries-and-breaker.md). Absent on a first
   * selection, which then pays nothing for the option.
   */
  readonly exclude?: PolicyWorker | undefined;
}

/** The schema's list of policies (--policy) is the one list. */
export type PolicyName = (typeof POLICIES)[number];

export type CacheAwareDecision = Decision;

export type SelectionFailureReason = 'prefill_admission_exhausted' | 'cache_candidates_exhausted' | 'proposal_empty';

/**
 * What one resolution of cache candidates recorded; the router books the reference's
 * per-resolution counters from it (docs/metrics-and-admin.md §Cache resolution metrics).
 */
export interface CacheResolutionAudit {
  readonly prefillPressureSource: 'estimated_prefill_queue_ms' | 'native_queue_tokens' | 'router_local';
  readonly admissionEvaluated: number;
  readonly admissionRejected: number;
  readonly queueGateRejected: number;
  readonly queueGateBestRejectedBlocks: number;
  readonly queueGateFellBack: boolean;
  readonly fleetAllQueued: boolean;
  readonly pressureGuardComparedPairs: number;
  readonly pressureGuardOverrides: number;
}

/** What a policy returns; the router books metrics from it and never re-derives them. */
export type SelectionOutcome = SelectionSuccess | SelectionFailure;

export interface SelectionSuccess {
  readonly ok: true;
  readonly worker: PolicyWorker;
  /**
   * The policy's runner-up, for audit and tests; may be absent. The proxy does not
   * retry on it: a retry is a fresh selection with `exclude` (docs/retries-and-breaker.md).
   */
  readonly backup: PolicyWorker | undefined;
  /** Label for sgl_router_policy_decisions_total{policy,reason}. */
  readonly reason: string;
  /** What the cache-aware ladder adds for the router to book; absent under the other policies. */
  readonly cacheAware?: CacheAwareAudit;
}

/** The cache-aware ladder's account of one selection (docs/metrics-and-admin.md §Cache resolution metrics). */
export interface CacheAwareAudit {
  /** The one decision to book; absent on a failed selection, which books none. */
  readonly decision?: CacheAwareDecision;
  /** Observe on sgl_router_diverted_overlap_blocks (cache_worker_queued only). */
  readonly divertedOverlapBlocks?: number;
  /** The deepest owner was gated but a shallower owner won (booked cache_hit). */
  readonly partialDiversion?: boolean;
  /** Cache candidates the queue gate rejected for this request. */
  readonly gateRejected?: readonly PolicyWorker[];
  /** The sampled "gate is inert" warning is due now. */
  readonly inertWarning?: boolean;
  /** Present whenever cache candidates were resolved. */
  readonly resolution?: CacheResolutionAudit;
}

export interface SelectionFailure {
  readonly ok: false;
  /** Label for sgl_router_policy_selection_failures_total{policy,reason}. */
  readonly reason: SelectionFailureReason;
  readonly cacheAware?: CacheAwareAudit;
}

export interface Policy {
  readonly name: PolicyName;
  /** Whether the policy reads prefix matches (the router skips hashing when not). */
  readonly usesPrefix: boolean;
  select(ctx: SelectionContext): SelectionOutcome;
}
