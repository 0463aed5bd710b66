/**
 * The worker queue gate (docs/routing.md §Queue gate). It reads only the
 * engine-reported waiting count: router-local in-flight counts cannot tell running
 * requests from waiting ones, so they are never substituted.
 */
import { isQueued } from '../../../contract/index.js';
import type { LoadView, PolicyWorker, PoolState } from '../types.js';

/**
 * `<` at the limit: a worker already holding `limit` waiting requests is making
 * requests wait. No fresh sample admits (fail open): unknown is not full.
 */
export function queueGateAdmits(load: LoadView, worker: PolicyWorker, limit: number | null): boolean {
  if (limit === null) return true;
  const basic = load.basic(worker);
  return basic === undefined || !isQueued(basic.waiting, limit);
}

/**
 * Every pool worker has a fresh sample at or over the limit. O(1) from the pool's
 * maintained counters; one unsampled worker makes it false because it is not
 * counted in `queued`.
 */
export function fleetIsAllQueued(pool: PoolState, limit: number | null): boolean {
  return limit !== null && pool.workers.length > 0 && pool.queued === pool.workers.length;
}

/**
 * The gate is configured but blind: the pool has workers and none has a fresh sample,
 * so it admits everyone (docs/routing.md §Gate-inert warning). O(1) from the pool's
 * counters.
 */
export function gateIsInert(pool: PoolState, limit: number | null): boolean {
  return limit !== null && pool.workers.length > 0 && pool.sampled === 0;
}
