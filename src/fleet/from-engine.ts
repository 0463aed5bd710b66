import { getEngineReply, pollEngineLoad, summarizeLoad } from '../engines/index.js';
import type { Dispatcher } from 'undici';
import { ErrorCodes, RouterctlError } from '../errors/index.js';
import type { ReplicaSnapshot } from './view-model.js';
import { emptyRouterInfo } from './view-model.js';

/** What a fleet of bare engines cannot show: everything a router adds. */
const ENGINE_BLIND = ['routing decisions', 'queue limit', 'gate', 'router in-flight', 'diverted overlap'];

/**
 * One engine with no router in front of it (`top --engines`), read through the same
 * engine reader the router's sampler uses (SGLang /v1/loads, /get_load, or /metrics;
 * vLLM /metrics): its waiting and running requests summed over DP ranks, as one
 * worker of a snapshot whose router fields are unknown. An engine that answers no load
 * endpoint is an error for this source, as an unreachable router is for the others.
 */
export async function snapshotFromEngine(url: string, o: { dispatcher: Dispatcher; timeoutMs: number }): Promise<ReplicaSnapshot> {
  const poll = await pollEngineLoad((path) => getEngineReply(url + path, { dispatcher: o.dispatcher, timeoutMs: o.timeoutMs }));
  if (!poll.ok) throw new RouterctlError(ErrorCodes.UNREACHABLE, `engine ${url}: ${poll.detail}`);
  const load = summarizeLoad(poll.readings);
  return {
    source: 'engine',
    at: Date.now(),
    router: emptyRouterInfo(),
    workers: [
      {
        url,
        healthy: true,
        breaker: null,
        waiting: load.waiting,
        running: load.running,
        kvUsage:
          load.usedTokens !== null && load.maxTotalTokens !== null && load.maxTotalTokens > 0
            ? Math.min(1, load.usedTokens / load.maxTotalTokens)
            : null,
        sampleAgeMs: 0,
        loadSource: 'poll',
        fresh: true,
        gated: null,
        inflight: null,
        requestsTotal: null,
        gateRejectionsTotal: null,
      },
    ],
    decisions: null,
    selectionFailuresTotal: null,
    diverted: null,
    partialDiversionsTotal: null,
    requestsTotal: null,
    gateRejectionsTotal: null,
    alerts: { allQueued: null, gateInert: null },
    prefixIndex: null,
    events: [],
    ttft: null,
    duration: null,
    blind: ENGINE_BLIND,
  };
}
