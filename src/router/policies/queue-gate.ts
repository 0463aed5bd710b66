/**
 * The worker queue gate (docs/routing.md §Queue gate), built once from the config and
 * held by every reader in the router: the load table's pool counters, the policy, the
 * booker, the decision recorder, the event watcher and the admin documents. It reads
 * only the engine-reported waiting count: router-local in-flight counts cannot tell
 * running requests from waiting ones, so they are never substituted. The rule itself
 * is the contract's (contract/queue-rule.ts), which the console applies too.
 */
import type { RouterConfig } from '../../config/index.js';
import { isQueued } from '../../contract/index.js';
import type { LoadView, PolicyWorker, PoolState } from './types.js';

export interface QueueGate {
  /** --worker-queue-limit: a worker whose fresh waiting count is at or over it is queued. null: the gate is off. */
  readonly limit: number | null;
  /** --saturation-queue-floor: enables the saturation pin (docs/routing.md §Saturation pin). null: no floor. */
  readonly floor: number | null;
  /** A fresh engine-reported waiting count is at or over the limit; never with the gate off. */
  isQueued(waiting: number): boolean;
  /**
   * The worker passes the gate: `<` the limit (a worker already holding `limit` waiting
   * requests is making requests wait). No fresh sample admits (fail open): unknown is not full.
   */
  admits(load: LoadView, worker: PolicyWorker): boolean;
  /**
   * Every pool worker has a fresh sample at or over the limit. O(1) from the pool's
   * maintained counters; one unsampled worker makes it false because it is not counted
   * in `queued`.
   */
  allQueued(pool: PoolState): boolean;
  /**
   * The gate is configured but blind: the pool has workers and none has a fresh sample,
   * so it admits everyone (docs/routing.md §Gate-inert warning). O(1) from the pool's counters.
   */
  inert(pool: PoolState): boolean;
}

/** The gate as the config sets it; the config was validated (the floor needs the limit and stays at or under it). */
export function queueGate(config: Pick<RouterConfig, 'workerQueueLimit' | 'saturationQueueFloor'>): QueueGate {
  const limit = config.workerQueueLimit;
  return Object.freeze({
    limit,
    floor: config.saturationQueueFloor,
    isQueued: (waiting: number) => isQueued(waiting, limit),
    admits: (load: LoadView, worker: PolicyWorker) => {
      if (limit === null) return true;
      const basic = load.basic(worker);
      return basic === undefined || !isQueued(basic.waiting, limit);
    },
    allQueued: (pool: PoolState) => limit !== null && pool.workers.length > 0 && pool.queued === pool.workers.length,
    inert: (pool: PoolState) => limit !== null && pool.workers.length > 0 && pool.sampled === 0,
  });
}

/** No limit and no floor: everyone is admitted, nothing is queued. */
export const NO_QUEUE_GATE: QueueGate = queueGate({ workerQueueLimit: null, saturationQueueFloor: null });
