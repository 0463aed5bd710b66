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
 * Copy headers minus hop-by-hop ones (and any the Connection header names), in
 * either direction. Content-Length is dropped too: node sets it or chunks the body.
 */
export function endToEndHeaders(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const named = new Set<string>();
  const connection = headers.connection;
  if (typeof connection === 'string') for (const n of connection.split(',')) named.add(n.trim().toLowerCase());
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    const key = k.toLowerCase();
    if (HOP_BY_HOP.has(key) || named.has(key)) continue;
    out[key] = v;
  }
  return out;
}
