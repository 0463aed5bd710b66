/**
 * Shared prefill admission for a pair proposal (docs/routing.md §Pair fallback,
 * §Range fallback, §Capacity fallback). routerctl has one global domain and no
 * eligibility filters, so the "range" is the legal worker set (the pool, in the
 * policy) and the pair is always drawn from it: the reference's "primary not in
 * range" and eligible_workers checks cannot fire and are omitted.
 */
import type { CapacityAdmissionMode } from '../../../config/index.js';
import type { QueueGate } from '../queue-gate.js';
import type { LoadView, PolicyWorker } from '../types.js';
import { capacityAdmits } from './capacity.js';
import { DecisionReason, type PrefillDecision } from './decision.js';
import type { PairProposal } from './pair-proposal.js';
import { scanPowerOfK } from './pair-proposal.js';
import { comparePressure, materiallyMorePressured, pressureData, type PressureLookup } from './pressure.js';

/** A pair member is admitted by capacity AND the gate: the gate demotes, it does not hard-reject. */
function pairMemberAdmitted(
  load: LoadView,
  w: PolicyWorker,
  inputTokens: number,
  gate: QueueGate,
  capacity: CapacityAdmissionMode,
): boolean {
  return capacityAdmits(load, w, inputTokens, capacity) && gate.admits(load, w);
}

function decide(
  proposal: PairProposal,
  selected: PolicyWorker,
  reason: DecisionReason,
  load: LoadView,
  retry: PolicyWorker | undefined,
): PrefillDecision {
  return {
    selected,
    primary: proposal.primary,
    backup: proposal.backup,
    reason,
    loadSnapshotVersion: load.version,
    retry,
  };
}

/** resolve_prefill_admitted: the strict pass. */
export function resolvePrefillAdmitted(
  range: readonly PolicyWorker[],
  proposal: PairProposal,
  inputTokens: number,
  load: LoadView,
  gate: QueueGate,
  capacity: CapacityAdmissionMode = 'reference',
): PrefillDecision | undefined {
  const { primary, backup, guard } = proposal;
  const primaryOk = pairMemberAdmitted(load, primary, inputTokens, gate, capacity);
  const backupOk = backup !== undefined && pairMemberAdmitted(load, backup, inputTokens, gate, capacity);
  if (primaryOk && backupOk) {
    if (guard.enabled) {
      const np = pressureData(load, primary);
      const nb = pressureData(load, backup);
      if (np !== undefined && nb !== undefined && materiallyMorePressured(np, nb, guard)) {
        return decide(proposal, backup, DecisionReason.BackupPressureGuard, load, primary);
      }
    }
    return decide(proposal, primary, DecisionReason.Primary, load, backup);
  }
  if (primaryOk) return decide(proposal, primary, DecisionReason.Primary, load, undefined);
  if (backupOk) return decide(proposal, backup, DecisionReason.BackupPrimaryAdmission, load, undefined);
  return rangeFallback(range, proposal, inputTokens, load, gate, capacity);
}

/**
 * range_fallback: the least-pressured capacity-admitted worker of the range, from
 * the gate-admitted tier when it is non-empty (so a shallower queue never beats an
 * unqueued worker), else from every admitted worker so an all-queueing range stays
 * routable. Ties keep the first in range order.
 *
 * This scans the whole range (the pool): the reference semantics need the minimum
 * over every admitted worker, and it only runs when both pair members were turned
 * away. Two passes, no allocation: the first decides the tier and its comparison
 * mode, the second finds the minimum.
 */
export function rangeFallback(
  range: readonly PolicyWorker[],
  proposal: PairProposal,
  inputTokens: number,
  load: LoadView,
  gate: QueueGate,
  capacity: CapacityAdmissionMode = 'reference',
): PrefillDecision | undefined {
  let anyAdmitted = false;
  let anyGateAdmitted = false;
  let admittedNative = true;
  let admittedEstimates = true;
  let gateNative = true;
  let gateEstimates = true;
  for (const w of range) {
    if (!capacityAdmits(load, w, inputTokens, capacity)) continue;
    anyAdmitted = true;
    const native = pressureData(load, w);
    const hasNative = native !== undefined;
    const hasEstimate = native?.estimatedPrefillQueueMs !== undefined;
    admittedNative &&= hasNative;
    admittedEstimates &&= hasEstimate;
    if (gate.on && gate.admits(load, w)) {
      anyGateAdmitted = true;
      gateNative &&= hasNative;
      gateEstimates &&= hasEstimate;
    }
  }
  if (!anyAdmitted) return undefined;

  const gateTier = gate.on && anyGateAdmitted;
  const compareEngine = gateTier ? gateNative : admittedNative;
  const estimates = gateTier ? gateEstimates : admittedEstimates;
  const lookup: PressureLookup = {
    load,
    compareEngine,
    source: !compareEngine ? 'router_local' : estimates ? 'estimated_prefill_queue_ms' : 'native_queue_tokens',
  };

  let best: PolicyWorker | undefined;
  for (const w of range) {
    if (!capacityAdmits(load, w, inputTokens, capacity)) continue;
    if (gateTier && !gate.admits(load, w)) continue;
    if (best === undefined || comparePressure(lookup, w, best) < 0) best = w;
  }
  return best === undefined ? undefined : decide(proposal, best, DecisionReason.RangeFallback, load, undefined);
}

/**
 * The last resort: power-of-k over the legal workers, ignoring capacity and the
 * gate on purpose, because by now the range has no unqueued worker with room and a
 * 503 would be worse than a queue. Fails only on an empty range.
 *
 * k is --min-load-choices: the newest reference threads it into resolve_prefill
 * (the version read used a plain power-of-two there).
 */
export function capacityFallback(
  range: readonly PolicyWorker[],
  proposal: PairProposal,
  load: LoadView,
  choices: number,
  random: () => number,
): PrefillDecision | undefined {
  const scan = scanPowerOfK(range, load, choices, random);
  if (scan === undefined) return undefined;
  return decide(proposal, scan.best, DecisionReason.CapacityFallbackPowerOfTwo, load, scan.runnerUp);
}

/** resolve_prefill: the strict pass, then the capacity fallback. */
export function resolvePrefill(
  range: readonly PolicyWorker[],
  proposal: PairProposal,
  inputTokens: number,
  load: LoadView,
  gate: QueueGate,
  choices: number,
  random: () => number,
  capacity: CapacityAdmissionMode = 'reference',
): PrefillDecision | undefined {
  return (
    resolvePrefillAdmitted(range, proposal, inputTokens, load, gate, capacity) ?? capacityFallback(range, proposal, load, choices, random)
  );
}
