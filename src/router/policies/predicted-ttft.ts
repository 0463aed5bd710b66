import type { LoadView, PolicyWorker } from './types.js';

/**
 * The TTFT `worker` is predicted to give a request of `routerTokens` uncached prompt
 * tokens now, ms (docs/routing.md §Learned prefill rate): its learnt rate, the prefill
 * this router has pending there and, when fresh, the prompt tokens its engine reported
 * waiting, and how late its first bytes have lately come beside that. Null while its estimate is cold, or under a policy without one.
 */
export function predictedTtftMs(worker: PolicyWorker, routerTokens: number, load: LoadView, quantile?: number): number | null {
  const prefill = worker.prefill;
  return prefill === undefined ? null : prefill.predictMs(routerTokens, load.basic(worker)?.queuedTokens ?? 0, load.at, quantile);
}
