/**
 * The pool as a retry sees it: the same routable pool minus the one worker the retry
 * is moving away from (docs/retries-and-breaker.md). Every policy selects over
 * `poolWithout(...)`, so a retry runs the same rungs, gate tiers and admission as a
 * first selection, over a pool in which the failed worker does not exist.
 */
import { isBelowFloor } from '../../contract/index.js';
import type { LoadView, PolicyWorker, PoolState } from './types.js';

/**
 * A reusable PoolState view that hides one worker. One instance per policy; it is
 * refilled in place on each use, so after the first retry it allocates nothing, and
 * a first selection (nothing excluded) never touches it. Valid, like every
 * selection input, for one synchronous selection only.
 *
 * Why a view rather than a per-rung "skip this worker" check: several rungs hand the
 * pool as a plain array to code that scans it (the range and capacity fallbacks), and
 * the pool's counters (all queued, below the floor) must agree with its arrays. A
 * view keeps all of that consistent in one place and leaves the rungs untouched.
 */
export class PoolWithout implements PoolState {
  readonly #workers: PolicyWorker[] = [];
  readonly #unqueued: PolicyWorker[] = [];
  sampled = 0;
  queued = 0;
  belowFloor = 0;

  get workers(): readonly PolicyWorker[] {
    return this.#workers;
  }

  get unqueued(): readonly PolicyWorker[] {
    return this.#unqueued;
  }

  /**
   * `source` as if `excluded` were not in it. Returns `source` itself when nothing is
   * excluded or the worker is not a pool member (its breaker already took it out),
   * otherwise this view, refilled: O(pool) on a retry, nothing on a first selection.
   *
   * The counters are `source`'s minus the excluded worker's own contribution, derived
   * the way the pool counts them: sampled when it has a fresh basic sample; queued
   * when it is a member outside the gate-admitted tier; below the floor when fresh and
   * waiting under `floor` (the --saturation-queue-floor the pool counts against;
   * undefined when the policy has none, and then the pool counts none).
   */
  over(source: PoolState, load: LoadView, excluded: PolicyWorker | undefined, floor: number | null): PoolState {
    if (excluded === undefined) return source;
    if (!copyWithout(source.workers, excluded, this.#workers)) return source;
    const inTier = copyWithout(source.unqueued, excluded, this.#unqueued);
    const basic = load.basic(excluded);
    this.sampled = source.sampled - (basic !== undefined ? 1 : 0);
    this.queued = source.queued - (inTier ? 0 : 1);
    this.belowFloor = source.belowFloor - (basic !== undefined && isBelowFloor(basic.waiting, floor) ? 1 : 0);
    return this;
  }
}

/**
 * Fill `into` with `from` minus `skip`, in order, overwriting in place (no new
 * backing store once `into` has grown to the pool's size). Returns whether `skip`
 * was found.
 */
function copyWithout(from: readonly PolicyWorker[], skip: PolicyWorker, into: PolicyWorker[]): boolean {
  let n = 0;
  let found = false;
  for (let i = 0; i < from.length; i++) {
    const w = from[i] as PolicyWorker;
    if (w === skip) found = true;
    else into[n++] = w;
  }
  into.length = n;
  return found;
}
