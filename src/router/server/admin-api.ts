import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiErrors } from '../api-error/api-error.js';
import type { DecisionFilter } from '../state/decisions/index.js';
import type { AdminStateParts } from './admin-state.js';
import { adminStateBody } from './admin-state.js';
import { StateDeltaEncoder } from './state-delta.js';

/** Digest of a token: comparing digests keeps lengths equal, so the compare is constant-time. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * Enforce `Authorization: Bearer <token>` on /admin/* when a token is configured. The
 * scheme is case-insensitive, as every HTTP auth scheme: `bearer` and `BEARER` work too.
 */
export function authorizeAdmin(req: IncomingMessage, expected: Buffer | undefined): void {
  if (!expected) return;
  const header = req.headers.authorization ?? '';
  const token = /^bearer +/i.test(header) ? header.replace(/^bearer +/i, '').trimEnd() : '';
  if (!timingSafeEqual(tokenDigest(token), expected)) throw ApiErrors.unauthorized();
}

/** The range of `interval_ms` on /admin/stream (docs/http-edge.md). */
export const STREAM_INTERVAL_MS = { default: 1000, min: 100, max: 60_000 } as const;

/**
 * `interval_ms` from the query: absent means the default; anything but a whole number
 * of milliseconds in [min, max] is a 400 (a huge value would overflow setInterval's
 * 32-bit delay and fire every millisecond).
 */
export function streamInterval(url: string | undefined): number {
  const q = new URL(url ?? '/', 'http://router').searchParams.get('interval_ms');
  if (q === null) return STREAM_INTERVAL_MS.default;
  const { min, max } = STREAM_INTERVAL_MS;
  const v = /^\d{1,9}$/.test(q) ? Number(q) : NaN;
  if (!(v >= min && v <= max)) {
    throw ApiErrors.badRequest(`interval_ms must be a whole number of milliseconds from ${min} to ${max} (got '${q.slice(0, 32)}')`);
  }
  return v;
}

/**
 * Server-sent events carrying one state document each, at once and then every
 * `interval_ms` (see streamInterval), until the client leaves. `delta=1` opts into
 * deltas (docs/metrics-and-admin.md §Stream deltas): the first event is the whole
 * document, later ones `state_delta` events with only what changed. A HEAD request
 * gets the headers only.
 */
export function streamState(
  req: IncomingMessage,
  res: ServerResponse,
  parts: () => AdminStateParts | Promise<AdminStateParts>,
  decisions?: (since: number) => Array<{ seq: number }>,
): void {
  const interval = streamInterval(req.url);
  const query = new URL(req.url ?? '/', 'http://router').searchParams;
  // `decisions=1` adds the routing decisions recorded since the last event (docs/decisions.md §Admin decisions).
  const withDecisions = decisions !== undefined && query.get('decisions') === '1';
  const deltas = query.get('delta') === '1' ? new StateDeltaEncoder() : undefined;
  // No explicit Connection header: node's own keeps a client's (or a draining router's) close.
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  let since = 0;
  let closed = false;
  // One event at a time: the fleet is read a slice at a time, and a tick that comes
  // while the last event is still being read is skipped, not queued behind it.
  let reading = false;
  // A document sent over several events (past an event's budget) is read once: the
  // events after the first bring the rest of that one instant, not of a fresh read each.
  let held: AdminStateParts | undefined;
  const send = async (): Promise<void> => {
    if (reading) return;
    reading = true;
    try {
      const p = held ?? (await parts());
      if (closed) return;
      const ev = deltas ? await deltas.nextInSlices(p, adminStateBody) : { event: 'state', data: adminStateBody(p) };
      held = deltas?.catchingUp ? p : undefined;
      if (closed) return;
      res.write(`event: ${ev.event}\ndata: `);
      res.write(ev.data);
      res.write('\n\n');
      if (!withDecisions) return;
      const fresh = decisions!(since);
      if (fresh.length === 0) return;
      since = fresh[fresh.length - 1]!.seq;
      res.write(`event: decisions\ndata: ${JSON.stringify(fresh)}\n\n`);
    } catch (err) {
      // The router's own fault: the client learns the stream ended, the router keeps serving.
      res.destroy(err instanceof Error ? err : new Error(String(err)));
    } finally {
      reading = false;
      // A document past an event's budget goes out over several events, back to back (docs/metrics-and-admin.md §Stream deltas).
      if (deltas?.catchingUp && !closed && !res.destroyed) setImmediate(() => void send());
    }
  };
  void send();
  const timer = setInterval(() => void send(), interval);
  res.once('close', () => {
    closed = true;
    clearInterval(timer);
  });
}

/** Largest `limit` on /admin/decisions. */
const MAX_DECISIONS = 10_000;

/**
 * GET /admin/decisions' filters (docs/decisions.md §Admin decisions): `worker` (URL),
 * `decision` (a decision label, or a reason for other policies), `since` (a sequence
 * number: only newer records), `request_id`, `limit` (newest first cut, 1..10000).
 * A malformed number is a 400, not an empty answer.
 */
export function decisionFilter(url: string | undefined): DecisionFilter {
  const q = new URL(url ?? '/', 'http://router').searchParams;
  const f: DecisionFilter = {};
  const whole = (name: string, min: number, max: number): number | undefined => {
    const v = q.get(name);
    if (v === null) return undefined;
    const n = /^\d{1,15}$/.test(v) ? Number(v) : NaN;
    if (!(n >= min && n <= max))
      throw ApiErrors.badRequest(`${name} must be a whole number from ${min} to ${max} (got '${v.slice(0, 32)}')`);
    return n;
  };
  const worker = q.get('worker');
  if (worker !== null) f.worker = worker.replace(/\/+$/, '');
  const decision = q.get('decision');
  if (decision !== null) f.decision = decision;
  const id = q.get('request_id');
  if (id !== null) f.requestId = id;
  const since = whole('since', 0, Number.MAX_SAFE_INTEGER);
  if (since !== undefined) f.since = since;
  const limit = whole('limit', 1, MAX_DECISIONS);
  if (limit !== undefined) f.limit = limit;
  return f;
}
