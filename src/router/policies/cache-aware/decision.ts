/**
 * Decision reasons, their policy-decision labels
 * (docs/routing.md §Policy decision reasons), and the mapping of a selection to its
 * one cache-aware decision (docs/routing.md §Decision mapping).
 */
import type { CacheAwareDecision, PolicyWorker } from '../types.js';

export const DecisionReason = Object.freeze({
  Primary: 'primary',
  CacheCandidate: 'cache_candidate',
  BackupPrimaryAdmission: 'backup_primary_admission',
  BackupPressureGuard: 'backup_pressure_guard',
  RangeFallback: 'range_fallback',
  CapacityFallbackPowerOfTwo: 'capacity_fallback_power_of_two',
  SaturationPin: 'saturation_pin',
} as const);
export type DecisionReason = (typeof DecisionReason)[keyof typeof DecisionReason];

/** Which kind of proposal a decision resolved; the label depends on it (docs/routing.md §Policy decision reasons). */
export type ProposalKind = 'cache_candidates' | 'cache_affinity' | 'pair';

/** One rung's answer: the Rust Decision plus the retry choice routerctl hands the proxy. */
export interface PrefillDecision {
  readonly selected: PolicyWorker;
  /** Echo of the proposal's primary (the reference keeps it for audit). */
  readonly primary: PolicyWorker;
  /** Echo of the proposal's backup; undefined for cache candidates and the pin. */
  readonly backup: PolicyWorker | undefined;
  readonly reason: DecisionReason;
  readonly loadSnapshotVersion: number;
  /**
   * The runner-up the rung saw: the other admitted pair member, or the capacity
   * fallback's runner-up. Reported as the selection's `backup`; the proxy's retry
   * selects afresh instead (docs/retries-and-breaker.md).
   */
  readonly retry: PolicyWorker | undefined;
}

/** `sgl_router_policy_decisions_total{policy="cache_aware",reason}`. */
export function cacheAwareReasonLabel(reason: DecisionReason, proposal: ProposalKind): string {
  switch (reason) {
    case DecisionReason.CacheCandidate:
      return 'cache_candidate';
    case DecisionReason.SaturationPin:
      return 'saturation_pin';
    case DecisionReason.Primary:
      return proposal === 'pair' ? 'no_cache_candidate' : 'cache_candidate';
    case DecisionReason.BackupPrimaryAdmission:
      return 'no_cache_candidate_admission_backup';
    case DecisionReason.BackupPressureGuard:
      return 'no_cache_candidate_pressure_backup';
    case DecisionReason.RangeFallback:
      return 'no_cache_candidate_range_fallback';
    case DecisionReason.CapacityFallbackPowerOfTwo:
      return 'no_cache_candidate_capacity_fallback_power_of_two';
  }
}

/**
 * The decision for a selection that found no cache winner, in exactly the
 * reference order:
 * 1. the gate removed nothing → whatever emptied the set, it was not the gate;
 * 2. the whole pool is queued → asked before capacity, so a saturated fleet whose
 *    re-admitted owners are also out of KV is not hidden as a cache miss;
 * 3. some candidate reached hard admission → capacity, not the gate, emptied it;
 * 4. otherwise the gate diverted the request off its owners.
 */
export function cacheAwareFallbackDecision(
  queueGateRejected: number,
  admissionEvaluated: number,
  fleetAllQueued: boolean,
): CacheAwareDecision {
  if (queueGateRejected === 0) return 'cache_miss';
  if (fleetAllQueued) return 'all_queued';
  if (admissionEvaluated > 0) return 'cache_miss';
  return 'cache_worker_queued';
}

/**
 * The decision for a cache winner. Kept-affinity-under-saturation is `all_queued`,
 * deliberately not spelled `cache_hit_*`, so hit-rate queries cannot absorb it.
 */
export function cacheWinnerDecision(reason: DecisionReason, queueGateFellBack: boolean): CacheAwareDecision {
  return reason === DecisionReason.SaturationPin || queueGateFellBack ? 'all_queued' : 'cache_hit';
}

/** The reference's sampled (1 in 64) info line for a pin; the router logs it on reason `saturation_pin`. */
export const SATURATION_PIN_LOG_MESSAGE = 'fleet saturated, keeping affinity with a queueing prefix owner instead of diverting';
