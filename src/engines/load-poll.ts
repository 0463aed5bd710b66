import type { EngineReply } from './engine-reply.js';
import { LOAD_ENDPOINTS, LOAD_PATHS, LOAD_SOURCES, readLoadReply } from './load-formats.js';
import type { LoadShape, LoadSource, Readings } from './load-formats.js';

/** Why a load poll produced no sample: a small fixed set, the label values of the failure counter. */
export type PollFailureReason = 'timeout' | 'connect' | 'http_status' | 'unreadable' | 'too_large';
export const POLL_FAILURE_REASONS: readonly PollFailureReason[] = ['connect', 'http_status', 'timeout', 'too_large', 'unreadable'];

export type LoadPoll =
  | { ok: true; source: LoadSource; sourceIndex: number; shape: LoadShape; readings: Readings }
  | {
      ok: false;
      reason: PollFailureReason;
      /** One line for logs and the admin state. */
      detail: string;
      /** The engine answered something over HTTP (it is alive, whatever it said). */
      answered: boolean;
      /** A known shape that proves load reporting but lacks the queue length. */
      noQueue?: { source: LoadSource; shape: LoadShape };
    };

/**
 * One load poll, walked the same way by the sampler and the probe
 * (docs/engine-load.md, "Which endpoint"): /v1/loads, /get_load, /metrics, starting
 * from `start` (the sampler's last good source) and trying each at most once. A
 * non-2xx or an unusable body moves on to the next endpoint; no answer at all
 * (timeout, refused connection) or an oversized reply ends the poll, so a hanging
 * engine costs one timeout per poll, not three.
 */
export async function pollEngineLoad(get: (path: string) => Promise<EngineReply>, start = 0): Promise<LoadPoll> {
  let reason: 'http_status' | 'unreadable' = 'http_status';
  let detail = 'no load endpoint answered';
  let noQueue: { source: LoadSource; shape: LoadShape } | undefined;
  for (let attempt = 0; attempt < LOAD_SOURCES.length; attempt++) {
    const sourceIndex = (start + attempt) % LOAD_SOURCES.length;
    const source = LOAD_SOURCES[sourceIndex]!;
    const endpoint = LOAD_ENDPOINTS[source];
    const reply = await get(LOAD_PATHS[source]);
    if (reply.kind === 'error') {
      return {
        ok: false,
        reason: reply.reason,
        detail: `${endpoint}: ${reply.detail}`,
        answered: reply.reason === 'too_large',
        ...(noQueue ? { noQueue } : {}),
      };
    }
    if (reply.kind === 'status') {
      if (reason === 'http_status') detail = `${endpoint} answered ${reply.status}`;
      continue;
    }
    const read = readLoadReply(source, reply.text);
    if (read.ok) return { ok: true, source, sourceIndex, shape: read.shape, readings: read.readings };
    reason = 'unreadable';
    detail = `${endpoint} answered an unreadable body (${read.detail})`;
    if (read.shape !== undefined) noQueue = { source, shape: read.shape };
  }
  return { ok: false, reason, detail, answered: true, ...(noQueue ? { noQueue } : {}) };
}
