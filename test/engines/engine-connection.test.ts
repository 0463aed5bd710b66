/**
 * The load sampler's own keep-alive client (src/engines/engine-connection.ts) against
 * servers that write exact bytes: every framing an engine's HTTP server may use, the
 * byte caps, and every way of not answering, each with the cause and wording of
 * getEngineReply (docs/engine-load.md §Poll failures).
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineConnection } from '../../src/engines/index.js';
import { rawHttpServer } from '../helpers/raw-http-server.js';

const servers: Array<{ close: (cb: () => void) => unknown }> = [];
const conns: EngineConnection[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) c.close();
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
});

/** A raw server (test/helpers/raw-http-server.ts) answering each request with `reply(n, socket)` (n counts requests on the socket). */
async function rawServer(reply: (n: number, socket: Socket) => void): Promise<{ url: URL; connections: () => number }> {
  const s = await rawHttpServer((r) => reply(r.n, r.socket));
  servers.push({ close: (cb) => void s.close().then(cb) });
  return { url: new URL(s.url), connections: s.connections };
}

const connection = (url: URL): EngineConnection => {
  const c = new EngineConnection(url);
  conns.push(c);
  return c;
};

const JSON_BODY = '{"loads":[{"dp_rank":0,"num_waiting_reqs":3}]}';
const ok = (body: string, extra = ''): string =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

describe('EngineConnection', () => {
  it('keeps one connection across polls (Content-Length framing)', async () => {
    const s = await rawServer((_n, so) => so.write(ok(JSON_BODY)));
    const c = connection(s.url);
    for (let i = 0; i < 3; i++) expect(await c.get('/v1/loads', 1000)).toEqual({ kind: 'ok', status: 200, text: JSON_BODY });
    expect(s.connections()).toBe(1);
  });

  it.each([
    ['one chunk', ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2e\r\n' + JSON_BODY + '\r\n0\r\n\r\n']],
    [
      'chunks split at every awkward place',
      [
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1',
        '7\r\n{"loads":[{"dp_',
        'rank":0,\r',
        '\n17;ext=1\r\n"num_waiting_reqs":3}]}',
        '\r\n',
        '0\r\n',
        '\r\n',
      ],
    ],
    [
      'trailers after the last chunk',
      ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2e\r\n' + JSON_BODY + '\r\n0\r\nx-trailer: 1\r\n', '\r\n'],
    ],
  ])('reads a chunked body: %s, and reuses the connection', async (_name, parts) => {
    const s = await rawServer((_n, so) => {
      parts.forEach((p, i) => setTimeout(() => so.write(p), i * 5));
    });
    const c = connection(s.url);
    expect(await c.get('/v1/loads', 1000)).toEqual({ kind: 'ok', status: 200, text: JSON_BODY });
    expect(await c.get('/v1/loads', 1000)).toEqual({ kind: 'ok', status: 200, text: JSON_BODY });
    expect(s.connections()).toBe(1);
  });

  it("asks under the worker URL's own path, with its host", async () => {
    const heads: string[] = [];
    const server: Server = createServer((so) => so.on('data', (d) => (heads.push(d.toString('latin1')), so.write(ok(JSON_BODY)))));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push({ close: (cb) => server.close(cb) });
    const port = (server.address() as AddressInfo).port;
    const c = connection(new URL(`http://127.0.0.1:${port}/engine-1/`));
    expect(await c.get('/v1/loads', 1000)).toMatchObject({ kind: 'ok' });
    expect(heads).toEqual([`GET /engine-1/v1/loads HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`]);
  });

  it('reads a body that runs until the connection closes, and connects anew for the next poll', async () => {
    const s = await rawServer((_n, so) => so.end(`HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n${JSON_BODY}`));
    const c = connection(s.url);
    expect(await c.get('/get_load', 1000)).toEqual({ kind: 'ok', status: 200, text: JSON_BODY });
    expect(await c.get('/get_load', 1000)).toEqual({ kind: 'ok', status: 200, text: JSON_BODY });
    expect(s.connections()).toBe(2);
  });

  it('a non-2xx answer is its status; a small body is drained and the connection kept, a huge one closes it', async () => {
    let asked = 0;
    const s = await rawServer((_n, so) =>
      so.write(
        asked++ === 0
          ? 'HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\nnot found'
          : asked === 2
            ? ok(JSON_BODY)
            : `HTTP/1.1 500 Internal Server Error\r\ncontent-length: ${200 * 1024}\r\n\r\n${'x'.repeat(200 * 1024)}`,
      ),
    );
    const c = connection(s.url);
    expect(await c.get('/v1/loads', 1000)).toEqual({ kind: 'status', status: 404 });
    expect(await c.get('/get_load', 1000)).toEqual({ kind: 'ok', status: 200, text: JSON_BODY });
    expect(s.connections()).toBe(1);
    expect(await c.get('/metrics', 1000)).toEqual({ kind: 'status', status: 500 });
    expect(await c.get('/metrics', 1000)).toMatchObject({ kind: 'status', status: 500 });
    expect(s.connections()).toBe(2);
  });

  it('a reply over the byte cap is too_large, declared or streamed, and the connection is closed', async () => {
    let asked = 0;
    const s = await rawServer((_n, so) =>
      asked++ === 0
        ? so.write(`HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n`)
        : so.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n400\r\n${'y'.repeat(1024)}\r\n400\r\n${'y'.repeat(1024)}\r\n`),
    );
    const c = connection(s.url);
    expect(await c.get('/v1/loads', 1000, 4096)).toEqual({ kind: 'error', reason: 'too_large', detail: 'reply larger than 4096 bytes' });
    expect(await c.get('/v1/loads', 1000, 1500)).toEqual({ kind: 'error', reason: 'too_large', detail: 'reply larger than 1500 bytes' });
    expect(s.connections()).toBe(2);
  });

  it('an engine that never answers is a timeout, within the budget', async () => {
    const s = await rawServer(() => undefined);
    const c = connection(s.url);
    const t0 = performance.now();
    expect(await c.get('/v1/loads', 150)).toEqual({ kind: 'error', reason: 'timeout', detail: 'no answer within 150 ms' });
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  it('a refused connection is connect, with the system message', async () => {
    const s = await rawServer(() => undefined);
    const url = s.url;
    await new Promise<void>((r) => servers.pop()!.close(() => r()));
    const reply = await connection(url).get('/v1/loads', 1000);
    expect(reply).toMatchObject({ kind: 'error', reason: 'connect' });
    expect(reply.kind === 'error' && reply.detail).toMatch(/ECONNREFUSED/);
  });

  it('an idle connection the engine closed is replaced without a failed poll', async () => {
    const s = await rawServer((_n, so) => {
      so.write(ok(JSON_BODY));
      // Close right after answering, as a server with a short keep-alive does; the client sees it later.
      setTimeout(() => so.destroy(), 20);
    });
    const c = connection(s.url);
    expect(await c.get('/v1/loads', 1000)).toMatchObject({ kind: 'ok' });
    await new Promise((r) => setTimeout(r, 80));
    expect(await c.get('/v1/loads', 1000)).toMatchObject({ kind: 'ok' });
    expect(s.connections()).toBe(2);
  });

  it('a close right after the request is written, on a reused connection, is retried once on a new one', async () => {
    const s = await rawServer((n, so) => (n === 1 ? so.destroy() : so.write(ok(JSON_BODY))));
    const c = connection(s.url);
    expect(await c.get('/v1/loads', 1000)).toMatchObject({ kind: 'ok' });
    expect(await c.get('/v1/loads', 1000)).toMatchObject({ kind: 'ok' });
    expect(s.connections()).toBe(2);
  });

  it.each([
    ['not HTTP', 'SSH-2.0-OpenSSH_9.6\r\n\r\n', 'a reply that is not HTTP/1.x'],
    ['a bad Content-Length', 'HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\n', "a Content-Length of 'ten'"],
    ['a bad chunk size', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', "a chunk size of 'zz'"],
  ])('a malformed reply (%s) is a connect failure that says why', async (_name, bytes, why) => {
    const s = await rawServer((_n, so) => so.write(bytes));
    expect(await connection(s.url).get('/v1/loads', 1000)).toEqual({ kind: 'error', reason: 'connect', detail: `malformed reply: ${why}` });
  });

  it("node's own HTTP server, as engines behind uvicorn or an ASGI bridge answer: fixed and chunked bodies, keep-alive", async () => {
    let connections = 0;
    const server = createHttpServer((req, res) => {
      if (req.url === '/chunked') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('sglang:num_queue_reqs 3\n');
        res.end('sglang:num_running_reqs 1\n');
      } else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON_BODY);
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push({ close: (cb) => (server.closeAllConnections(), server.close(cb)) });
    const c = connection(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    expect(await c.get('/v1/loads', 1000)).toEqual({ kind: 'ok', status: 200, text: JSON_BODY });
    expect(await c.get('/chunked', 1000)).toEqual({
      kind: 'ok',
      status: 200,
      text: 'sglang:num_queue_reqs 3\nsglang:num_running_reqs 1\n',
    });
    expect(connections).toBe(1);
  });

  it('a reset cuts a reply framed by the close: a failed poll, not a short answer', async () => {
    const s = await rawServer((_n, so) => {
      so.write(`HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n${JSON_BODY.slice(0, 10)}`);
      setTimeout(() => so.resetAndDestroy(), 50);
    });
    expect(await connection(s.url).get('/v1/loads', 1000)).toMatchObject({ kind: 'error', reason: 'connect' });
  });
});
