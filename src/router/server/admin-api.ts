import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiErrors } from './api-error.js';

/** Digest of a token: comparing digests keeps lengths equal, so the compare is constant-time. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Enforce `Authorization: Bearer <token>` on /admin/* when a token is configured. */
export function authorizeAdmin(req: IncomingMessage, expected: Buffer | undefined): void {
  if (!expected) return;
  const header = req.headers.authorization ?? '';
  const token = header.startsWith('Bearer ') ? header.slice(7) : '';
  if (!timingSafeEqual(tokenDigest(token), expected)) throw ApiErrors.unauthorized();
}

/**
 * Server-sent events carrying one state object each, at once and then every
 * `interval_ms` from the query (default 1000, at least 100), until the client leaves.
 */
export function streamState(req: IncomingMessage, res: ServerResponse, state: () => unknown): void {
  const q = new URL(req.url ?? '/', 'http://router').searchParams.get('interval_ms');
  const asked = q === null ? NaN : Number(q);
  const interval = Math.max(100, Number.isFinite(asked) ? asked : 1000);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (): void => void res.write(`event: state\ndata: ${JSON.stringify(state())}\n\n`);
  send();
  const timer = setInterval(send, interval);
  res.once('close', () => clearInterval(timer));
}
