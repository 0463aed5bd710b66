/**
 * The baselines for router overhead: the thinnest useful proxies — node:http in, one
 * connection pool per upstream, round-robin, the body buffered (as the router buffers
 * it) and the response passed back with its content type and length. No parsing, no
 * selection, no metrics. Three of them, by the client they use:
 *
 * - `--api request`: undici's `pool.request()` and `stream.pipeline` into the
 *   response: the way most proxies are written, and the baseline the goals of
 *   BENCHMARKS.md, section 2, were set against.
 * - `--api dispatch`: undici's `pool.dispatch()` with a handler writing each chunk
 *   straight to the response: no stream, no promise per response.
 * - `--api pool`: the same handler on routerctl's own upstream pool, as the router
 *   relays (docs/http-edge.md §Relay): what the router's client costs without the router.
 *
 *   node dist/perf/support/bare-proxy.js [--api request|dispatch|pool] http://127.0.0.1:31000 …
 * prints its URL on stdout.
 */
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import { UpstreamPool } from '../../src/router/index.js';

const args = process.argv.slice(2);
const api = args[0] === '--api' ? args[1]! : 'request';
const urls = args[0] === '--api' ? args.slice(2) : args;
if (api !== 'request' && api !== 'dispatch' && api !== 'pool') throw new Error(`--api must be request, dispatch or pool, not ${api}`);
const upstreams = api === 'pool' ? [] : urls.map((u) => new Pool(u, { connections: 1024, pipelining: 1 }));
const own =
  api === 'pool' ? urls.map((u) => new UpstreamPool(u, { connections: 1024, connectTimeoutMs: 10_000, idleTimeoutMs: 30_000 })) : [];
let next = 0;

/** What a thin proxy passes back: the body's type and framing. */
function passedHeaders(h: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = { 'content-type': String(h['content-type'] ?? 'application/json') };
  if (h['content-length'] !== undefined && h['transfer-encoding'] === undefined) out['content-length'] = String(h['content-length']);
  return out;
}

/** What either client lets a handler do: undici's dispatch controller and routerctl's own. */
interface Controller {
  pause(): void;
  resume(): void;
}

/** Relays one response chunk by chunk, pausing the upstream while the client is behind; a handler for undici's dispatch and routerctl's pool alike. */
class PassThrough {
  #controller: Controller | undefined;
  readonly #resume = (): void => this.#controller?.resume();
  constructor(private readonly res: ServerResponse) {}
  onRequestStart(controller: Controller): void {
    this.#controller = controller;
  }
  onResponseStart(_c: Controller, status: number, headers: Readonly<Record<string, string | string[] | undefined>>): void {
    if (status >= 200) this.res.writeHead(status, passedHeaders(headers));
  }
  onResponseData(controller: Controller, chunk: Buffer): void {
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', this.#resume);
    }
  }
  onResponseEnd(): void {
    this.res.end();
  }
  onResponseError(): void {
    if (!this.res.headersSent) this.res.writeHead(502);
    this.res.end();
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    if (api === 'pool') {
      const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
      return void own[next++ % own.length]!.dispatch({ path: req.url ?? '/', headers, body, timeoutMs: 30_000 }, new PassThrough(res));
    }
    const pool = upstreams[next++ % upstreams.length]!;
    const opts = { path: req.url ?? '/', method: 'POST' as const, headers: { 'content-type': 'application/json' }, body };
    if (api === 'dispatch') return void pool.dispatch(opts, new PassThrough(res));
    try {
      const up = await pool.request(opts);
      res.writeHead(up.statusCode, passedHeaders(up.headers));
      await pipeline(up.body, res);
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  server.close();
  for (const p of upstreams) void p.destroy();
  for (const p of own) void p.destroy();
  process.exit(0);
});
