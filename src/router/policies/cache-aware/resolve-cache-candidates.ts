/**
 * resolve_cache_candidates (steps 2–7 of docs/routing.md §Selection ladder (cache_aware)):
 * queue gate, second tier, hard admission, saturation pin, tournament, and the audit
 * the router books counters from.
 */
import { predictedTtftMs } from '../predicted-ttft.js';
import type { CacheResolutionAudit, LoadView, PolicyWorker, PoolState } from '../types.js';
import { capacityAdmits } from './capacity.js';
import type { CacheCandidate, CacheCandidateProposal } from './candidates.js';
import { DecisionReason, type PrefillDecision } from './decision.js';
import { compareIds, compareNumbers, comparePressure, lookupOver, materiallyMorePressured, type PressureLookup } from './pressure.js';

/**
 * The audit of one resolution (docs/metrics-and-admin.md §Cache resolution metrics),
 * as the policy types declare it for the router to book from.
 */
export type CacheGateAudit = CacheResolutionAudit;

export interface CacheResolution {
  /** Undefined when no candidate could be chosen (the caller falls back to a pair). */
  readonly decision: PrefillDecision | undefined;
  /** The chosen candidate, for its matched depth. */
  readonly winner: CacheCandidate | undefined;
  readonly audit: CacheGateAudit;
  /** The candidates the gate pass rejected, in seed order. */
  readonly gateRejected: readonly CacheCandidate[];
}

const candidateWorker = (c: CacheCandidate): PolicyWorker => c.worker;

export function resolveCacheCandidates(
  proposal: CacheCandidateProposal,
  inputTokens: number,
  load: LoadView,
  pool: PoolState,
  /** Under the slo gate: the TTFT predicted where the request would go without its owners (null: unknown); asked at most once. */
  elsewhereMs?: () => number | null,
): CacheResolution {
  const gate = proposal.gate;
  const floor = gate.floor;
  let fleetAllQueued = gate.allQueued(pool);

  // The gate runs before hard admission: a queueing owner is removed before it can
  // win on cache depth, however much capacity it has.
  let evaluated: readonly CacheCandidate[] = proposal.candidates;
  const rejected: CacheCandidate[] = [];
  let bestRejectedBlocks = 0;
  let fellBack = false;
  if (gate.sloMs !== null) {
    const slo = sloVerdict(proposal.candidates, gate.sloMs, load, elsewhereMs);
    for (const c of slo.missing) if (c.matchedPrefixBlocks > bestRejectedBlocks) bestRejectedBlocks = c.matchedPrefixBlocks;
    rejected.push(...slo.missing);
    if (slo.elsewhere) {
      evaluated = slo.meeting;
    } else if (slo.nowhere) {
      // Nobody could meet the goal: affinity is kept, as the reference keeps it for a fleet all queued.
      fleetAllQueued = true;
      fellBack = true;
    }
  } else if (gate.on) {
    const admittedByGate: CacheCandidate[] = [];
    for (const c of proposal.candidates) {
      if (gate.admits(load, c.worker)) {
        admittedByGate.push(c);
      } else {
        rejected.push(c);
        if (c.matchedPrefixBlocks > bestRejectedBlocks) bestRejectedBlocks = c.matchedPrefixBlocks;
      }
    }
    evaluated = admittedByGate;
    // Second tier: only when the gate itself emptied the set AND the whole pool is
    // queued. Triggering on "set empty" alone would hand a single queueing owner its
    // traffic straight back and make the gate a no-op. A configured floor replaces
    // this tier with the saturation pin.
    fellBack = evaluated.length === 0 && rejected.length > 0 && fleetAllQueued && floor === null;
    if (fellBack) evaluated = proposal.candidates;
  }

  // Built over the evaluated set only, so a gated-out worker without native data
  // cannot downgrade the comparison mode of the ones still competing.
  const lookup = lookupOver(load, evaluated, candidateWorker);

  const admitted: CacheCandidate[] = [];
  for (const c of evaluated) {
    if (capacityAdmits(load, c.worker, inputTokens, proposal.capacity)) admitted.push(c);
  }

  let comparedPairs = 0;
  let overrides = 0;
  let winner: CacheCandidate | undefined;
  let reason: DecisionReason | undefined;

  if (admitted.length === 0) {
    // "No candidate admitted" includes a mix of gate-rejected and capacity-rejected
    // candidates; the pin then ranks only the gate-rejected owners. Unknown queues
    // are not idle here (pool.belowFloor counts fresh samples only), the reverse of
    // the gate's fail-open.
    if (rejected.length > 0 && floor !== null && pool.belowFloor === 0) {
      winner = pickPin(rejected, inputTokens, load, proposal);
      if (winner !== undefined) reason = DecisionReason.SaturationPin;
    }
  } else {
    let workFloor = admitted[0] as CacheCandidate;
    for (const c of admitted) if (c.uncachedTokens < workFloor.uncachedTokens) workFloor = c;
    const ceiling = workFloor.uncachedTokens + proposal.switchMarginTokens;
    const guarded = proposal.guard.enabled && lookup.compareEngine;
    let best = workFloor;
    for (const c of admitted) {
      if (c === best || c.uncachedTokens > ceiling) continue;
      const baseline = compareTournament(proposal, lookup, best, c, false);
      let verdict = baseline;
      if (guarded) {
        comparedPairs += 1;
        verdict = compareTournament(proposal, lookup, best, c, true);
        if (verdict !== baseline) overrides += 1;
      }
      if (verdict > 0) best = c;
    }
    winner = best;
    reason = DecisionReason.CacheCandidate;
  }

  const audit: CacheGateAudit = {
    prefillPressureSource: lookup.source,
    admissionEvaluated: evaluated.length,
    admissionRejected: evaluated.length - admitted.length,
    queueGateRejected: rejected.length,
    queueGateBestRejectedBlocks: bestRejectedBlocks,
    queueGateFellBack: fellBack,
    fleetAllQueued,
    pressureGuardComparedPairs: comparedPairs,
    pressureGuardOverrides: overrides,
  };
  const decision: PrefillDecision | undefined =
    winner === undefined || reason === undefined
      ? undefined
      : {
          selected: winner.worker,
          primary: winner.worker,
          backup: undefined,
          reason,
          loadSnapshotVersion: load.version,
          retry: undefined,
        };
  return { decision, winner: decision === undefined ? undefined : winner, audit, gateRejected: rejected };
}

interface SloVerdict {
  /** Owners predicted to miss the goal. */
  readonly missing: readonly CacheCandidate[];
  /** The others: predicted to meet it, or not yet learnt (cold start keeps plain cache_aware). */
  readonly meeting: readonly CacheCandidate[];
  /** Some engine other than the missing owners is predicted to meet the goal: the missing ones leave. */
  readonly elsewhere: boolean;
  /** The engine the request would go to instead is predicted to miss the goal too (false when it is not yet learnt: unknown is not full). */
  readonly nowhere: boolean;
}

/**
 * The slo gate (docs/routing.md §SLO gate): an owner leaves when its predicted TTFT for
 * this request, its own uncached tokens included, misses `goalMs` and another engine's
 * would not: an owner that meets it (or is not yet learnt), else the engine the request
 * would go to without its owners, asked only then, for the whole prompt.
 */
function sloVerdict(
  candidates: readonly CacheCandidate[],
  goalMs: number,
  load: LoadView,
  elsewhereMs: (() => number | null) | undefined,
): SloVerdict {
  let missing: CacheCandidate[] | undefined;
  for (const c of candidates) {
    const p = predictedTtftMs(c.worker, c.uncachedTokens, load);
    if (p !== null && p > goalMs) (missing ??= []).push(c);
  }
  if (missing === undefined) return { missing: NONE, meeting: candidates, elsewhere: false, nowhere: false };
  const meeting = candidates.filter((c) => !missing.includes(c));
  if (meeting.length > 0) return { missing, meeting, elsewhere: true, nowhere: false };
  const there = elsewhereMs?.() ?? null;
  // Not yet learnt there: nothing is known to be better or worse, so the owners stay as plain cache_aware keeps them.
  if (there === null) return { missing: NONE, meeting: candidates, elsewhere: false, nowhere: false };
  return { missing, meeting, elsewhere: there <= goalMs, nowhere: there > goalMs };
}

const NONE: readonly CacheCandidate[] = Object.freeze([]);

/**
 * The least-pressured gate-rejected owner that passes hard admission, ties by id.
 * The lookup spans all rejected owners; the pin ranks by pressure alone, not by
 * uncached work, because every owner is queueing anyway.
 */
function pickPin(
  rejected: readonly CacheCandidate[],
  inputTokens: number,
  load: LoadView,
  proposal: CacheCandidateProposal,
): CacheCandidate | undefined {
  const lookup = lookupOver(load, rejected, candidateWorker);
  let pick: CacheCandidate | undefined;
  for (const c of rejected) {
    if (!capacityAdmits(load, c.worker, inputTokens, proposal.capacity)) continue;
    if (pick === undefined || (comparePressure(lookup, c.worker, pick.worker) || compareIds(c.worker, pick.worker)) < 0) {
      pick = c;
    }
  }
  return pick;
}

function compareByWork(lookup: PressureLookup, a: CacheCandidate, b: CacheCandidate): number {
  return (
    compareNumbers(a.uncachedTokens, b.uncachedTokens) || comparePressure(lookup, a.worker, b.worker) || compareIds(a.worker, b.worker)
  );
}

/**
 * The tournament comparison; positive means `a` (the incumbent) loses. Outside the
 * switch margin, cache work decides. Inside it, the guard may let a materially
 * less pressured candidate beat a near cache gain.
 */
function compareTournament(
  proposal: CacheCandidateProposal,
  lookup: PressureLookup,
  a: CacheCandidate,
  b: CacheCandidate,
  useGuard: boolean,
): number {
  if (Math.abs(a.uncachedTokens - b.uncachedTokens) > proposal.switchMarginTokens) return compareByWork(lookup, a, b);
  if (useGuard) {
    const na = lookup.load.native(a.worker);
    const nb = lookup.load.native(b.worker);
    if (na !== undefined && nb !== undefined) {
      if (materiallyMorePressured(na, nb, proposal.guard)) return 1;
      if (materiallyMorePressured(nb, na, proposal.guard)) return -1;
    }
  }
  return compareByWork(lookup, a, b);
}
