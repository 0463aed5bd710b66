import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiErrors } from '../api-error/api-error.js';
import { readRequestBody } from '../request/read-body.js';
import type { Membership } from '../membership/fleet-membership.js';
import { sendJson } from './send-json.js';

/** A membership change's body is one URL: anything larger is not one. */
const MAX_BODY_BYTES = 16 * 1024;

/**
 * `POST /admin/workers {"url": …}` and `DELETE /admin/workers?url=…` (docs/http-edge.md
 * §Membership): refused on a router without --admin-token whatever the host (the
 * token itself is checked before this), and while a discovery mode owns the fleet.
 */
export async function changeMembership(req: IncomingMessage, res: ServerResponse, m: Membership): Promise<void> {
  if (!m.tokenConfigured) throw ApiErrors.adminTokenRequired();
  const owner = m.owner();
  if (owner !== 'static') throw ApiErrors.discoveryManaged(owner);
  if (req.method === 'DELETE') {
    const url = workerUrl(new URL(req.url ?? '/', 'http://router').searchParams.get('url'));
    const removed = m.remove(url);
    if (removed === undefined) throw ApiErrors.workerNotFound();
    return sendJson(res, 200, { url, state: 'leaving', inflight: removed.inflight });
  }
  const { chunks } = await readRequestBody(req, MAX_BODY_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw ApiErrors.badRequest('the body must be JSON: {"url": "http://host:port"}');
  }
  const url = workerUrl(typeof body === 'object' && body !== null ? (body as { url?: unknown }).url : undefined);
  if (m.add(url) === 'exists') throw ApiErrors.workerExists();
  sendJson(res, 201, { url, state: 'joining' });
}

/** A worker's base URL as the fleet keys it: http(s), host and port, no path; 400 otherwise. */
export function workerUrl(value: unknown): string {
  const text = typeof value === 'string' ? value.trim() : '';
  let u: URL | undefined;
  try {
    u = text === '' ? undefined : new URL(text);
  } catch {
    u = undefined;
  }
  if (
    u === undefined ||
    (u.protocol !== 'http:' && u.protocol !== 'https:') ||
    (u.pathname !== '/' && u.pathname !== '') ||
    u.search !== ''
  ) {
    throw ApiErrors.badRequest('url must be a worker base URL: http(s)://host:port, with no path or query');
  }
  return `${u.protocol}//${u.host}`;
}
