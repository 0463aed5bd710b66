/**
 * Hard (capacity) admission on native scheduling data (docs/routing.md §Hard capacity admission).
 * routerctl has no buckets, so the per-range max_pending_prefill_tokens limit of
 * the reference never applies and both of its admission predicates reduce to this.
 */
import type { CapacityAdmissionMode } from '../../../config/index.js';
import type { LoadView, PolicyWorker } from '../types.js';

/**
 * Admits when the worker has no native data (fail open: an engine that only
 * publishes basic counts must stay routable). Otherwise, under `reference`, only if
 * one more running request and the whole input fit the published limits; these hold
 * under any engine schedule policy, so they apply even when the uncached-token fields
 * are not comparable (docs/engine-load.md, "Capacity and pressure"). `running` holds
 * the running cap alone and `off` admits every worker (--capacity-admission): on
 * engines whose published KV is small beside their prompts the KV test turns most
 * owners away, and the request then falls to the capacity fallback, which ignores
 * the prefix (BENCHMARKS.md, section 17).
 */
export function capacityAdmits(
  load: LoadView,
  worker: PolicyWorker,
  inputTokens: number,
  mode: CapacityAdmissionMode = 'reference',
): boolean {
  if (mode === 'off') return true;
  const native = load.native(worker);
  if (native === undefined) return true;
  if (native.running + 1 > native.maxRunningRequests) return false;
  return mode === 'running' || native.totalTokens + inputTokens <= native.maxTotalTokens;
}
