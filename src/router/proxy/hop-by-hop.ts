import type { IncomingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/**
 * Request headers that stop at the router, beyond the hop-by-hop ones. `expect`: the
 * router's HTTP server already answered `100 Continue` and read the whole body, so
 * the expectation is met; passing it on would also make undici refuse the request
 * (it does not implement 100-continue), which must never look like a worker failure.
 * `content-type` is set by the router itself. See docs/retries-and-breaker.md.
 */
const NOT_FORWARDED = new Set(['expect', 'content-type']);

/**
 * Copy headers minus hop-by-hop ones (and any the Connection header names), in
 * either direction. Content-Length is dropped too: node sets it or chunks the body.
 */
export function endToEndHeaders(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  return copyHeaders(headers, undefined);
}

/**
 * The headers sent to a worker for a buffered request body: the client's end-to-end
 * headers, minus the ones the router consumed, plus the body's own framing.
 */
export function upstreamRequestHeaders(headers: IncomingHttpHeaders, bodyLength: number): Record<string, string | string[]> {
  const out = copyHeaders(headers, NOT_FORWARDED);
  out['content-type'] = 'application/json';
  out['content-length'] = String(bodyLength);
  return out;
}

function copyHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
  alsoSkip: ReadonlySet<string> | undefined,
): Record<string, string | string[]> {
  const named = new Set<string>();
  const connection = headers.connection;
  if (typeof connection === 'string') for (const n of connection.split(',')) named.add(n.trim().toLowerCase());
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    const key = k.toLowerCase();
    if (HOP_BY_HOP.has(key) || named.has(key) || alsoSkip?.has(key)) continue;
    out[key] = v;
  }
  return out;
}
