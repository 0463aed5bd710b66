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
]);

/**
 * Request headers that stop at the router, beyond the hop-by-hop ones. `expect`: the
 * router's HTTP server already answered `100 Continue` and read the whole body, so
 * the expectation is met. `content-type` and `content-length` are set by the router
 * itself. See docs/retries-and-breaker.md.
 */
const NOT_FORWARDED = new Set(['expect', 'content-type', 'content-length']);

/**
 * A response's headers minus hop-by-hop ones (and any its Connection header names).
 * Content-Length stays when the body is relayed byte for byte under it: the client
 * then gets the worker's framing, and node writes no chunk headers. A chunked
 * response loses it (the two must not be combined; node chunks the body again).
 */
export function endToEndHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out = copyHeaders(headers, undefined);
  if (headers['transfer-encoding'] !== undefined) delete out['content-length'];
  return out;
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

const PLAIN_CONNECTION = /^\s*(?:keep-alive|close)\s*$/i;

/** Header names are lower case here: node's parser and the router's own both give them so. */
function copyHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
  alsoSkip: ReadonlySet<string> | undefined,
): Record<string, string | string[]> {
  const connection = headers.connection;
  // Connection names more hop-by-hop headers only when it says more than keep-alive or close.
  const named = typeof connection === 'string' && !PLAIN_CONNECTION.test(connection) ? connectionNames(connection) : undefined;
  const out: Record<string, string | string[]> = {};
  for (const key in headers) {
    const v = headers[key];
    if (v === undefined || HOP_BY_HOP.has(key) || alsoSkip?.has(key) || named?.has(key)) continue;
    out[key] = v;
  }
  return out;
}

function connectionNames(connection: string): Set<string> {
  const named = new Set<string>();
  for (const n of connection.split(',')) named.add(n.trim().toLowerCase());
  return named;
}
