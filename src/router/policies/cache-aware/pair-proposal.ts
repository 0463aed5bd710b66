/**
 * The power-of-k pair proposal for the fallback (docs/routing.md §Pair fallback).
 */
import type { QueueGate } from '../queue-gate.js';
import type { LoadView, PolicyWorker, PoolState } from '../types.js';
import { comparePairwise, GUARD_OFF, type PressureGuard } from './pressure.js';

export interface PairProposal {
  readonly primary: PolicyWorker;
  /** Runner-up of the sample; undefined with k = 1 or a one-worker tier. */
  readonly backup: PolicyWorker | undefined;
  /** The pair's guard hints for shared prefill admission. */
  readonly guard: PressureGuard;
}

export interface SampleScan {
  readonly best: PolicyWorker;
  readonly runnerUp: PolicyWorker | undefined;
}

/** A uniform index in [0, n), robust to a random source that returns exactly 1. */
function drawIndex(random: () => number, n: number): number {
  const i = Math.floor(random() * n);
  return i < 0 ? 0 : i >= n ? n - 1 : i;
}

let swapBuffer = new Int32Array(16);
/** Room for k swap pairs, reused: selection is synchronous, so one buffer serves every call. */
function swapPairs(k: number): Int32Array {
  if (swapBuffer.length < 2 * k) swapBuffer = new Int32Array(2 * k);
  return swapBuffer;
}

/**
 * Draws k members of `workers` and keeps the best and the runner-up.
 *
 * - k ≥ |workers|: every member in pool order, so the exact minimum; ties keep
 *   pool order (the power_of_two code read does this; the CLI help's "random
 *   ties" is not followed).
 * - k = 1: one uniform draw, no ranking, no runner-up.
 * - otherwise: a uniform sample of k distinct members in random order, by a
 *   partial Fisher–Yates over a sparse list of swaps: O(k²) time (k is a handful),
 *   O(k) memory, never a pool-sized array.
 *
 * The scan is linear and only a strict improvement displaces: the pairwise
 * comparator is not transitive over mixed native/router-local members, so a sort
 * could be inconsistent, and ties must keep the first-drawn member.
 */
export function scanPowerOfK(
  workers: readonly PolicyWorker[],
  load: LoadView,
  choices: number,
  random: () => number,
): SampleScan | undefined {
  const n = workers.length;
  if (n === 0) return undefined;
  const k = choices >= 1 ? Math.floor(choices) : 1;

  let best: PolicyWorker | undefined;
  let runnerUp: PolicyWorker | undefined;
  const consider = (w: PolicyWorker): void => {
    if (best === undefined) {
      best = w;
    } else if (comparePairwise(load, w, best) < 0) {
      runnerUp = best;
      best = w;
    } else if (runnerUp === undefined || comparePairwise(load, w, runnerUp) < 0) {
      runnerUp = w;
    }
  };

  if (k >= n) {
    for (const w of workers) consider(w);
  } else if (k === 1) {
    return { best: workers[drawIndex(random, n)] as PolicyWorker, runnerUp: undefined };
  } else {
    // The swaps so far, as (position, member) pairs: at most k of them, looked up by
    // a scan (k is a handful), in an array kept between calls.
    const swaps = swapPairs(k);
    let used = 0;
    for (let i = 0; i < k; i++) {
      const j = i + drawIndex(random, n - i);
      // picked = what position j holds; then position j takes what position i holds.
      let picked = j;
      let atI = i;
      let slotJ = -1;
      for (let s = 0; s < used; s++) {
        const p = swaps[2 * s]!;
        if (p === j) {
          picked = swaps[2 * s + 1]!;
          slotJ = s;
        }
        if (p === i) atI = swaps[2 * s + 1]!;
      }
      if (slotJ < 0) {
        slotJ = used++;
        swaps[2 * slotJ] = j;
      }
      swaps[2 * slotJ + 1] = atI;
      consider(workers[picked] as PolicyWorker);
    }
  }
  return best === undefined ? undefined : { best, runnerUp };
}

/**
 * The fallback pair. With the gate on, the sample comes from the gate-admitted tier
 * (pool.unqueued) so the minimum of a small sample cannot be a queueing worker
 * while an unqueued one exists; only an all-queueing pool samples everyone.
 *
 * The guard hints default to off: the reference's cache-aware fallback builds its
 * pair through the plain power-of-two policy, whose hints are disabled.
 */
export function proposePair(
  pool: PoolState,
  load: LoadView,
  gate: QueueGate,
  choices: number,
  random: () => number,
  guard: PressureGuard = GUARD_OFF,
): PairProposal | undefined {
  const tier = gate.on && pool.unqueued.length > 0 ? pool.unqueued : pool.workers;
  const scan = scanPowerOfK(tier, load, choices, random);
  return scan === undefined ? undefined : { primary: scan.best, backup: scan.runnerUp, guard };
}
