/**
 * The router's connections to a worker (src/router/upstream/upstream-pool.ts) against
 * servers that write exact bytes: keep-alive and its limits, a worker closing an idle
 * connection, timeouts that blame the worker and never a slow client, the connection
 * budget, and the router tearing connections down. What the client of the router sees
 * of each is in relay-e2e and retries-e2e; here is what the worker sees.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamPool } from '../../src/router/index.js';
import type { UpstreamController, UpstreamHandler, UpstreamPoolOptions } from '../../src/router/index.js';
import { rawHttpServer } from '../helpers/raw-http-server.js';
import type { RawServer } from '../helpers/raw-http-server.js';

const servers: RawServer[] = [];
const pools: UpstreamPool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const s of servers.splice(0)) await s.close();
});

/** A raw server (test/helpers/raw-http-server.ts) answering request `n` on connection `conn` with `reply(n, socket, conn)`. */
async function rawServer(reply: (n: number, socket: Socket, conn: number) => void): Promise<RawServer> {
  const s = await rawHttpServer((r) => reply(r.n, r.socket, r.conn));
  servers.push(s);
  return s;
}

const OPTS: UpstreamPoolOptions = { connections: 16, connectTimeoutMs: 1000, idleTimeoutMs: 30_000 };
function pool(url: string, opts: Partial<UpstreamPoolOptions> = {}): UpstreamPool {
  const p = new UpstreamPool(url, { ...OPTS, ...opts });
  pools.push(p);
  return p;
}

interface Outcome {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  error: (Error & { code?: string }) | undefined;
}

/** Send one request and collect what the handler hears; `onStart` may pause or abort at the head. */
function send(
  p: UpstreamPool,
  opts: {
    body?: string | Buffer[];
    timeoutMs?: number;
    onStart?: (c: UpstreamController) => void;
    onController?: (c: UpstreamController) => void;
  } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { status: 0, headers: {}, body: '', error: undefined };
    const chunks: Buffer[] = [];
    const handler: UpstreamHandler = {
      onRequestStart: (c) => opts.onController?.(c),
      onResponseStart: (c, status, headers) => {
        out.status = status;
        out.headers = headers;
        opts.onStart?.(c);
      },
      onResponseData: (_c, chunk) => void chunks.push(Buffer.from(chunk)),
      onResponseEnd: () => resolve({ ...out, body: Buffer.concat(chunks).toString() }),
      onResponseError: (_c, err) => resolve({ ...out, body: Buffer.concat(chunks).toString(), error: err }),
    };
    const body = opts.body ?? '{"x":1}';
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const length = Buffer.isBuffer(bytes) ? bytes.length : bytes.reduce((n, b) => n + b.length, 0);
    p.dispatch(
      {
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', 'content-length': String(length) },
        body: bytes,
        timeoutMs: opts.timeoutMs ?? 2000,
      },
      handler,
    );
  });
}

const ok = (body: string, extra = ''): string =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('UpstreamPool', () => {
  it('sends the request as given and keeps one connection across requests', async () => {
    const s = await rawServer((n, so) => so.write(ok(`{"n":${n}}`, 'x-engine: a\r\n')));
    const p = pool(s.url);
    for (let i = 0; i < 3; i++) {
      const r = await send(p, { body: [Buffer.from('{"x":'), Buffer.from(`${i}}`)] });
      expect(r).toMatchObject({ status: 200, body: `{"n":${i}}`, error: undefined });
      expect(r.headers['x-engine']).toBe('a');
    }
    expect(s.connections()).toBe(1);
    expect(s.requests.map((r) => r.body)).toEqual(['{"x":0}', '{"x":1}', '{"x":2}']);
    expect(s.requests[0]!.head).toMatch(
      /^POST \/v1\/chat\/completions HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\ncontent-type: application\/json\r\ncontent-length: 7$/,
    );
  });

  it('bodies on either side of the one-write size arrive byte for byte, whole or in chunks', async () => {
    const s = await rawServer((n, so) => so.write(ok(`{"n":${n}}`)));
    const p = pool(s.url);
    // Head and body share one buffer below 4 KiB, node's pooled size (upstream-connection.ts); past it they go corked.
    const sizes = [0, 1, 2000, 3900, 3990, 4000, 4095, 4096, 65_537, 300_000];
    const bodyOf = (size: number): string =>
      Array.from({ length: size }, (_, i) => String.fromCharCode(33 + ((i * 7 + size) % 94))).join('');
    for (const [i, size] of sizes.entries()) {
      const text = bodyOf(size);
      const whole = Buffer.from(text);
      // Odd requests go as three uneven chunks, the way a body arrives from the client.
      const body = i % 2 === 0 ? text : [whole.subarray(0, size >> 2), whole.subarray(size >> 2, size - 1), whole.subarray(size - 1)];
      expect(await send(p, { body })).toMatchObject({ status: 200, body: `{"n":${i}}`, error: undefined });
    }
    expect(s.requests.map((r) => r.body)).toEqual(sizes.map(bodyOf));
    expect(s.requests.map((r) => /content-length: (\d+)$/.exec(r.head)?.[1])).toEqual(sizes.map(String));
    expect(s.connections()).toBe(1);
  });

  it('a worker that closed an idle connection gets the request again on a new one, once', async () => {
    // The first request on every connection is answered; a second one on the same connection is met by a close, as an engine's idle timeout would.
    const s = await rawServer((n, so) => (n === 0 ? so.write(ok('{}')) : so.destroy()));
    const p = pool(s.url);
    expect((await send(p)).error).toBeUndefined();
    const again = await send(p);
    expect(again).toMatchObject({ status: 200, error: undefined });
    expect(s.connections()).toBe(2);
    // Sent twice: once on the closed connection, once on the new one.
    expect(s.requests.map((r) => r.conn)).toEqual([0, 0, 1]);
  });

  it('a new connection closed before any answer fails as the worker closing it, and is not sent again', async () => {
    const s = await rawServer((_n, so) => so.destroy());
    const r = await send(pool(s.url));
    expect(r.error?.code).toBe('UPSTREAM_CLOSED');
    expect(s.requests).toHaveLength(1);
  });

  it('a refused connection carries its errno', async () => {
    const s = await rawServer(() => undefined);
    const url = s.url;
    await servers.pop()!.close();
    expect((await send(pool(url))).error?.code).toBe('ECONNREFUSED');
  });

  it('no status line within the timeout; no body byte within it', async () => {
    const silent = await rawServer(() => undefined);
    expect((await send(pool(silent.url), { timeoutMs: 200 })).error?.code).toBe('UPSTREAM_HEADERS_TIMEOUT');
    const stalls = await rawServer((_n, so) => so.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'));
    const r = await send(pool(stalls.url), { timeoutMs: 200 });
    expect([r.status, r.body, r.error?.code]).toEqual([200, 'abc', 'UPSTREAM_BODY_TIMEOUT']);
  });

  it('a client that is behind for longer than the timeout is not a worker timeout', async () => {
    const s = await rawServer((_n, so) => {
      so.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n');
      setTimeout(() => so.write('3\r\ndef\r\n0\r\n\r\n'), 50);
    });
    const r = await send(pool(s.url), {
      timeoutMs: 150,
      onStart: (c) => {
        c.pause();
        setTimeout(() => c.resume(), 500);
      },
    });
    expect(r).toMatchObject({ status: 200, body: 'abcdef', error: undefined });
  });

  it("a worker's Keep-Alive timeout is kept, less a second; one of a second or less means no reuse", async () => {
    const short = await rawServer((_n, so) => so.write(ok('{}', 'keep-alive: timeout=1\r\n')));
    const p1 = pool(short.url);
    await send(p1);
    await send(p1);
    expect(short.connections()).toBe(2);

    const two = await rawServer((_n, so) => so.write(ok('{}', 'keep-alive: timeout=2\r\n')));
    const p2 = pool(two.url);
    await send(p2);
    expect(p2.connections).toBe(1);
    // Closed within a sweep (250 ms) of the second the worker's timeout leaves.
    await sleep(1600);
    expect(p2.connections).toBe(0);
  });

  it('Connection: close, an answer until close, and bytes past the answer each end the connection', async () => {
    const replies = [ok('{}', 'connection: close\r\n'), 'HTTP/1.1 200 OK\r\n\r\nto the end', `${ok('{}')}HTTP/1.1 200 OK\r\n`];
    for (const reply of replies) {
      const s = await rawServer((_n, so) => (reply.includes('to the end') ? so.end(reply) : so.write(reply)));
      const p = pool(s.url);
      expect((await send(p)).error).toBeUndefined();
      expect((await send(p)).error).toBeUndefined();
      expect(s.connections()).toBe(2);
    }
  });

  it('past its connection budget a request waits, and one given up while waiting is never sent', async () => {
    const held: Socket[] = [];
    const s = await rawServer((_n, so) => void held.push(so));
    const p = pool(s.url, { connections: 1 });
    const first = send(p);
    let queued: UpstreamController | undefined;
    const second = send(p, { onController: (c) => (queued = c) });
    const third = send(p);
    await sleep(100);
    expect(s.requests).toHaveLength(1);
    queued!.abort(new Error('the client went away'));
    expect((await second).error?.message).toBe('the client went away');
    held.shift()!.write(ok('{"n":1}'));
    expect((await first).body).toBe('{"n":1}');
    await sleep(50);
    held.shift()!.write(ok('{"n":3}'));
    expect((await third).body).toBe('{"n":3}');
    // The third went on the first one's connection; the second never reached the worker.
    expect(s.requests.map((r) => r.conn)).toEqual([0, 0]);
  });

  it('a request aborted mid-body closes its connection at once', async () => {
    let closed = false;
    const s = await rawServer((_n, so) => {
      so.on('close', () => (closed = true));
      so.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n');
    });
    const r = await send(pool(s.url), { onStart: (c) => setTimeout(() => c.abort(new Error('gone')), 50) });
    expect(r.error?.message).toBe('gone');
    await sleep(50);
    expect(closed).toBe(true);
  });

  // Every way a connection ends goes through its one teardown: the worker sees its
  // socket closed, the pool counts no connection, and the next request gets a new one.
  // (docs/dependencies.md §What the router's own HTTP/1.1 client leaves out)
  const ENDINGS: ReadonlyArray<{
    how: string;
    reply: (so: Socket) => void;
    opts?: Parameters<typeof send>[1];
    error: string | undefined;
  }> = [
    { how: 'malformed bytes', reply: (so) => so.write('HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n'), error: 'UPSTREAM_MALFORMED' },
    {
      how: 'an unasked 101',
      reply: (so) => so.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n${ok('{}')}`),
      error: 'UPSTREAM_MALFORMED',
    },
    { how: 'no status line in time', reply: () => undefined, opts: { timeoutMs: 100 }, error: 'UPSTREAM_HEADERS_TIMEOUT' },
    {
      how: 'no body byte in time',
      reply: (so) => so.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n'),
      opts: { timeoutMs: 100 },
      error: 'UPSTREAM_BODY_TIMEOUT',
    },
    { how: 'a close mid-head', reply: (so) => so.end('HTTP/1.1 200 OK\r\ncontent-'), error: 'UPSTREAM_CLOSED' },
    { how: 'a reset', reply: (so) => so.resetAndDestroy(), error: 'ECONNRESET' },
    {
      how: 'an abort by the handler',
      reply: (so) => so.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n'),
      opts: { onStart: (c) => setTimeout(() => c.abort(Object.assign(new Error('gone'), { code: 'GONE' })), 20) },
      error: 'GONE',
    },
    { how: 'Connection: close', reply: (so) => so.write(ok('{}', 'connection: close\r\n')), error: undefined },
    { how: 'bytes past the answer', reply: (so) => so.write(`${ok('{}')}HTTP/1.1 200 OK\r\n`), error: undefined },
  ];

  it.each(ENDINGS)(
    'one teardown, after $how: the worker sees the close, the pool holds no connection, the next request opens one',
    async (e) => {
      let closed = 0;
      const s = await rawServer((_n, so, conn) => {
        so.on('close', () => closed++);
        if (conn === 0) e.reply(so);
        else so.write(ok('{"next":1}'));
      });
      const p = pool(s.url);
      expect((await send(p, e.opts)).error?.code).toBe(e.error);
      await sleep(50);
      expect([closed, p.connections]).toEqual([1, 0]);
      expect((await send(p)).body).toBe('{"next":1}');
      expect(s.requests.map((r) => r.conn)).toEqual([0, 1]);
    },
  );

  it('malformed bytes fail as such and the connection is not reused', async () => {
    const s = await rawServer((_n, so, conn) => so.write(conn === 0 ? 'HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n' : ok('{}')));
    const p = pool(s.url);
    expect((await send(p)).error?.code).toBe('UPSTREAM_MALFORMED');
    expect((await send(p)).error).toBeUndefined();
    expect(s.connections()).toBe(2);
  });

  it('destroyed by the router: what is under way fails as its doing, and nothing more is sent', async () => {
    const s = await rawServer(() => undefined);
    const p = pool(s.url);
    const inflight = send(p);
    await sleep(50);
    await p.destroy();
    expect((await inflight).error?.code).toBe('UPSTREAM_DESTROYED');
    expect((await send(p)).error?.code).toBe('UPSTREAM_DESTROYED');
    expect(s.requests).toHaveLength(1);
  });

  it('close() waits for what is under way', async () => {
    const s = await rawServer((_n, so) => setTimeout(() => so.write(ok('{}')), 100));
    const p = pool(s.url);
    const inflight = send(p);
    await sleep(20);
    let closed = false;
    const closing = p.close().then(() => (closed = true));
    expect(closed).toBe(false);
    expect((await inflight).error).toBeUndefined();
    await closing;
    expect(p.connections).toBe(0);
  });

  it('a header value with CR or LF is refused before anything is sent', async () => {
    const s = await rawServer((_n, so) => so.write(ok('{}')));
    const p = pool(s.url);
    const err = await new Promise<Error>((resolve) =>
      p.dispatch(
        { path: '/v1/x', headers: { 'x-a': 'one\r\nx-b: two' }, body: Buffer.alloc(0), timeoutMs: 1000 },
        {
          onRequestStart: () => undefined,
          onResponseStart: () => undefined,
          onResponseData: () => undefined,
          onResponseEnd: () => resolve(new Error('answered')),
          onResponseError: (_c, e) => resolve(e),
        },
      ),
    );
    expect((err as { code?: string }).code).toBe('UPSTREAM_INVALID_REQUEST');
    await sleep(20);
    expect(s.connections()).toBe(0);
  });

  it('a reset cuts an answer framed by the close: an error, never a complete answer', async () => {
    const s = await rawServer((_n, so) => {
      so.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {"partial":1}');
      setTimeout(() => so.resetAndDestroy(), 50);
    });
    const r = await send(pool(s.url));
    expect([r.body, r.error?.code]).toEqual(['data: {"partial":1}', 'ECONNRESET']);
  });

  it('a kept connection closed long after the request was sent is the worker failing it, and it is not sent again', async () => {
    const s = await rawServer((n, so) => (n === 0 ? so.write(ok('{}')) : setTimeout(() => so.destroy(), 300)));
    const p = pool(s.url);
    await send(p);
    expect((await send(p)).error?.code).toBe('UPSTREAM_CLOSED');
    expect(s.requests.map((r) => r.conn)).toEqual([0, 0]);
  });

  it('close() called twice: both settle', async () => {
    const s = await rawServer((_n, so) => setTimeout(() => so.write(ok('{}')), 50));
    const p = pool(s.url);
    const inflight = send(p);
    await sleep(10);
    const settled = await Promise.all([p.close(), p.close(), inflight]);
    expect(settled[2].error).toBeUndefined();
  });
});
