/**
 * `--admission slo` (docs/routing.md §SLO admission): what the router does with a request
 * whose selected engine is predicted to miss --ttft-slo-ms. The verdict is pure; each
 * front (the HTTP front, the virtual runs) holds and sheds by it, so that the what-if and
 * the router agree. The endpoint picker cannot hold: Envoy waits on its answer under
 * ext_proc's message timeout, so there a hold is a shed.
 */
import { predictedTtftMs } from './predicted-ttft.js';
import { ADMISSION_LATE_QUANTILE } from './prefill-rate/index.js';
import type { LoadView, PolicyWorker } from './types.js';

/**
 * How often a held request is placed again, ms: a tenth of the shortest goal that makes
 * sense for a chat (about half a second), and the poll interval's order, so a queue that
 * drained between two load samples is seen within one.
 */
export const HOLD_RECHECK_MS = 50;
/**
 * Requests held at once, over the whole router; one more is shed at once. Enough for
 * every engine of a large fleet to have a full batch's worth waiting in the router (the
 * reference's 256 running × 4), small enough that a held request's body (up to
 * --max-body-bytes) cannot make the router's memory the bottleneck.
 */
export const HOLD_CAPACITY = 1024;
/** The priority (x-routerctl-priority) from which a request is never held or shed: it goes to its engine at once. */
export const UNSHEDDABLE_PRIORITY = 1;

export type AdmissionVerdict = 'admit' | 'hold' | 'shed';

/** The longest Retry-After a shed request is told, s: past a minute the prediction says little. */
const MAX_RETRY_AFTER_S = 60;

/**
 * A request `waitedMs` after it arrived, selected to `worker` with `routerTokens` uncached
 * prompt tokens: admitted when the engine is predicted to start it within the goal (or
 * nothing is learnt of it: cold start admits); held while it could still start in time
 * once what is ahead of it has begun; shed when even with nothing ahead it could not.
 */
export function sloAdmission(
  goalMs: number,
  waitedMs: number,
  worker: PolicyWorker,
  routerTokens: number,
  load: LoadView,
): AdmissionVerdict {
  const predicted = predictedTtftMs(worker, routerTokens, load, ADMISSION_LATE_QUANTILE);
  if (predicted === null || waitedMs + predicted <= goalMs) return 'admit';
  const soonest = worker.prefill?.soonestMs(routerTokens, load.at, ADMISSION_LATE_QUANTILE) ?? null;
  return soonest !== null && waitedMs + soonest > goalMs ? 'shed' : 'hold';
}

/**
 * The Retry-After for a request shed from `worker`, whole seconds: how long what is ahead
 * of it there is predicted to take to begin (at least 1, at most a minute), so that a
 * client that waits as told finds the queue it was shed from drained.
 */
export function sloRetryAfterS(worker: PolicyWorker, routerTokens: number, load: LoadView): number {
  const predicted = predictedTtftMs(worker, routerTokens, load, ADMISSION_LATE_QUANTILE);
  // Both with the same lateness: their difference is what is ahead alone.
  const soonest = worker.prefill?.soonestMs(routerTokens, load.at, ADMISSION_LATE_QUANTILE) ?? null;
  const aheadMs = predicted === null || soonest === null ? 0 : predicted - soonest;
  return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(aheadMs / 1000)));
}
