/**
 * The baselines for router overhead: the thinnest useful proxies — node:http in, an
 * undici Pool per upstream, round-robin, the body buffered (as the router buffers it)
 * and the response passed back with its content type and length. No parsing, no
 * selection, no metrics. Two of them, by the undici interface they use:
 *
 * - `--api request`: `pool.request()` and `stream.pipeline` into the response: the
 *   way most proxies are written, and the baseline the goals of BENCHMARKS.md,
 *   section 2, were set against.
 * - `--api dispatch`: `pool.dispatch()` with a handler writing each chunk straight to
 *   the response, as routerctl relays (docs/http-edge.md §Relay). The floor: no
 *   stream, no promise per response.
 *
 *   node dist/perf/support/bare-proxy.js [--api request|dispatch] http://127.0.0.1:31000 …
 * prints its URL on stdout.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';

const args = process.argv.slice(2);
const api = args[0] === '--api' ? args[1]! : 'request';
const urls = args[0] === '--api' ? args.slice(2) : args;
if (api !== 'request' && api !== 'dispatch') throw new Error(`--api must be request or dispatch, not ${api}`);
const upstreams = urls.map((u) => new Pool(u, { connections: 1024, pipelining: 1 }));
let next = 0;

/** What a thin proxy passes back: the body's type and framing. */
function passedHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = { 'content-type': String(h['content-type'] ?? 'application/json') };
  if (h['content-length'] !== undefined && h['transfer-encoding'] === undefined) out['content-length'] = String(h['content-length']);
  return out;
}

/** Relays one response chunk by chunk, pausing the upstream while the client is behind. */
class PassThrough implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  readonly #resume = (): void => this.#controller?.resume();
  constructor(private readonly res: ServerResponse) {}
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
  }
  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (status >= 200) this.res.writeHead(status, passedHeaders(headers));
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
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
    const pool = upstreams[next++ % upstreams.length]!;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
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
  process.exit(0);
});
