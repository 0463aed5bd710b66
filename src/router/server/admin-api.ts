import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiErrors } from './api-error.js';

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
 * Server-sent events carrying one state object each, at once and then every
 * `interval_ms` (see streamInterval), until the client leaves. A HEAD request gets
 * the headers only.
 */
export function streamState(req: IncomingMessage, res: ServerResponse, state: () => unknown): void {
  const interval = streamInterval(req.url);
  // No explicit Connection header: node's own keeps a client's (or a draining router's) close.
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const send = (): void => void res.write(`event: state\ndata: ${JSON.stringify(state())}\n\n`);
  send();
  const timer = setInterval(send, interval);
  res.once('close', () => clearInterval(timer));
}
