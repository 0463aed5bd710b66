/**
 * Hard (capacity) admission on native scheduling data (docs/routing.md §Hard capacity admission).
 * routerctl has no buckets, so the per-range max_pending_prefill_tokens limit of
 * the reference never applies and both of its admission predicates reduce to this.
 */
import type { LoadView, PolicyWorker } from '../types.js';

/**
 * Admits when the worker has no native data (fail open: an engine that only
 * publishes basic counts must stay routable), otherwise only if one more running
 * request and the whole input fit the published limits. These limits hold under any
 * engine schedule policy, so they apply even when the uncached-token fields are not
 * comparable (docs/engine-load.md, "Capacity and pressure").
 */
export function capacityAdmits(load: LoadView, worker: PolicyWorker, inputTokens: number): boolean {
  const native = load.native(worker);
  if (native === undefined) return true;
  return native.running + 1 <= native.maxRunningRequests && native.totalTokens + inputTokens <= native.maxTotalTokens;
}
