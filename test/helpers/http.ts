import { request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): unknown;
}

/**
 * A plain node:http request that reports the response even when the server answers
 * before the body is fully sent (as a 413 does), which fetch turns into an error.
 */
export function rawRequest(
  url: string,
  opts: { method?: string; body?: string | Buffer; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      url,
      { method: opts.method ?? 'GET', headers: { 'content-type': 'application/json', ...opts.headers } },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', (err) => {
      // EPIPE/ECONNRESET while a refused body is still being written are expected: the
      // server's answer is read all the same. With no answer a second later (a kept-alive
      // connection the server had closed, say) it is the request's failure, not a hang.
      if (!(err as NodeJS.ErrnoException).code?.match(/EPIPE|ECONNRESET/)) reject(err);
      else setTimeout(() => answered || reject(err), 1000);
    });
    // A request that must not hang: no whole answer in time is a failure of its own.
    if (opts.timeoutMs !== undefined)
      req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`no answer from ${url} in ${opts.timeoutMs} ms`)));
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

export const getJson = async (url: string): Promise<unknown> => {
  const r = await rawRequest(url);
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.text}`);
  return r.json();
};

export const put = (url: string, body: unknown): Promise<RawResponse> => rawRequest(url, { method: 'PUT', body: JSON.stringify(body) });
export const post = (url: string, body: unknown): Promise<RawResponse> =>
  rawRequest(url, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });

/** Poll until `fn` returns a truthy value (bounded), for state that settles asynchronously. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 5000, stepMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Listen on 127.0.0.1 at a free port; resolves with the server's base URL. */
export async function listenLoopback(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Close a test server, cutting whatever connections it still holds. */
export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((r) => server.close(() => r()));
}
