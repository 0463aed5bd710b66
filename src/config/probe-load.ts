import { LOAD_ENDPOINTS, pollEngineLoad, summarizeLoad } from '../engines/index.js';
import type { EngineReply, LoadShape, LoadSummary } from '../engines/index.js';

export type LoadEndpoint = (typeof LOAD_ENDPOINTS)[keyof typeof LOAD_ENDPOINTS];

/**
 * What a worker's load endpoints say, summed over DP ranks, as the router's sampler
 * would read them: both go through the one engine reader and the same endpoint walk
 * (docs/engine-load.md). `waiting` is null only when the engine reports load in a
 * shape without the waiting queue (legacy `/get_load` `{"load": N}`) and nothing
 * better answered; other fields are null when some rank does not report them.
 */
export interface LoadReading extends Omit<LoadSummary, 'waiting' | 'running' | 'ranks'> {
  endpoint: LoadEndpoint;
  shape: LoadShape;
  waiting: number | null;
  running: number | null;
  /** Ranks the reading covers. */
  ranks: number | null;
}

export async function probeLoad(get: (path: string) => Promise<EngineReply>): Promise<LoadReading | null> {
  const poll = await pollEngineLoad(get);
  if (poll.ok) return { endpoint: LOAD_ENDPOINTS[poll.source], shape: poll.shape, ...summarizeLoad(poll.readings) };
  if (poll.noQueue === undefined) return null;
  return {
    endpoint: LOAD_ENDPOINTS[poll.noQueue.source],
    shape: poll.noQueue.shape,
    waiting: null,
    running: null,
    ranks: null,
    usedTokens: null,
    totalTokens: null,
    maxTotalTokens: null,
    maxRunningRequests: null,
    waitingUncachedTokens: null,
  };
}
