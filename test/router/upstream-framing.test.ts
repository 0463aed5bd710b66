import { request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { rawHttpServer } from '../helpers/raw-http-server.js';
import type { RawServer } from '../helpers/raw-http-server.js';
import { memoryLogger, startTestRouter } from '../helpers/router.js';

/**
 * The router's HTTP/1.1 client against a worker that answers in exact bytes, one
 * framing of RFC 9112 section 6 (and every kind of 1xx) at a time, written from the RFC and
 * sharing no code with the client. Each request carries its client's own marker, and
 * the one assertion that matters: every client gets its own answer (from this worker,
 * or from a retry on a well-behaved one) or the router's error envelope; never an empty
 * reply, and never another client's bytes. A connection whose framing was in doubt is
 * not used again.
 */
const model = 'framing-model';
const CLIENTS = 12;

interface Ctx {
  /** The marker of the request before this one on the same worker: what a confused client would hand out. */
  readonly previous: string;
}

type Reply = (socket: Socket, marker: string, ctx: Ctx) => void;

const body = (marker: string): string => JSON.stringify({ id: 'c', object: 'chat.completion', marker, choices: [] });
const ok = (marker: string, extra = ''): string => {
  const b = body(marker);
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${extra}content-length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
};
const chunked = (marker: string): string => {
  const b = body(marker);
  return `${Buffer.byteLength(b).toString(16)}\r\n${b}\r\n0\r\n\r\n`;
};
const chunkedHead = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n';

/** Valid answers: the client gets this worker's own answer. */
const VALID: Array<[string, Reply]> = [
  ['100 Continue, then the answer', (s, m) => s.write(`HTTP/1.1 100 Continue\r\n\r\n${ok(m)}`)],
  ['102 Processing, then the answer', (s, m) => s.write(`HTTP/1.1 102 Processing\r\n\r\n${ok(m)}`)],
  [
    '103 Early Hints with a field, then the answer',
    (s, m) => s.write(`HTTP/1.1 103 Early Hints\r\nlink: </a>; rel=preload\r\n\r\n${ok(m)}`),
  ],
  ['two 1xx in a row, then the answer', (s, m) => s.write(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n${ok(m)}`)],
  ['chunked', (s, m) => s.write(chunkedHead + chunked(m))],
  [
    'chunked with extensions and trailers',
    (s, m) => {
      const b = body(m);
      s.write(`${chunkedHead}${Buffer.byteLength(b).toString(16)};ext=1\r\n${b}\r\n0\r\nx-trailer: t\r\n\r\n`);
    },
  ],
  [
    'chunked, one byte per write',
    (s, m) => {
      const all = chunkedHead + chunked(m);
      let i = 0;
      const next = (): void => {
        if (i < all.length) s.write(all[i++]!, () => setImmediate(next));
      };
      next();
    },
  ],
  [
    'Content-Length and chunked: chunked wins, and the connection is closed',
    (s, m) =>
      s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n${chunked(m)}`),
  ],
  [
    'a Content-Length repeated with one value',
    (s, m) => {
      const b = body(m);
      const n = Buffer.byteLength(b);
      s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${n}, ${n}\r\n\r\n${b}`);
    },
  ],
  [
    'neither length nor chunked: the body runs until the close',
    (s, m) => s.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n${body(m)}`),
  ],
  ['HTTP/1.0 with a length', (s, m) => s.write(ok(m).replace('HTTP/1.1', 'HTTP/1.0'))],
];

/** Broken answers: the client gets a retry's answer, or the router's envelope. */
const BROKEN: Array<[string, Reply]> = [
  // The unasked 101, then a complete answer naming another client (seen at 29b0f74: 27 of 27 taken as the answer).
  [
    "a 101 Switching Protocols it was not asked for, then another client's answer",
    (s, m, c) => s.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: websocket\r\n\r\n${ok(c.previous || m)}`),
  ],
  ['a chunk size of 0x10', (s) => s.write(`${chunkedHead}0x10\r\n${'a'.repeat(16)}\r\n0\r\n\r\n`)],
  ['a chunk size of -10', (s) => s.write(`${chunkedHead}-10\r\n${'a'.repeat(16)}\r\n0\r\n\r\n`)],
  ['a chunk size of 2^64 + 16', (s) => s.write(`${chunkedHead}10000000000000010\r\n${'a'.repeat(16)}\r\n0\r\n\r\n`)],
  ['a chunk whose data overruns its size', (s) => s.write(`${chunkedHead}5\r\n${'a'.repeat(10)}\r\n0\r\n\r\n`)],
  ['a 2 KB chunk size line', (s) => s.write(`${chunkedHead}${'0'.repeat(2048)}10\r\n${'a'.repeat(16)}\r\n0\r\n\r\n`)],
  ['a chunk size line ended by a bare LF', (s) => s.write(`${chunkedHead}10\n${'a'.repeat(16)}\r\n0\r\n\r\n`)],
  ['a Content-Length of 291, then FIN', (s) => s.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 291\r\n\r\n')],
  ['chunked, then FIN before the first chunk', (s) => s.end(chunkedHead)],
  [
    'a head for a stream, then FIN',
    (s) => s.end('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n'),
  ],
  ['two different Content-Lengths', (s, m) => s.write(`HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n${body(m)}`)],
  ['a Content-Length that is not a number', (s, m) => s.write(`HTTP/1.1 200 OK\r\ncontent-length: 1e3\r\n\r\n${body(m)}`)],
  ['a head with bare LF line ends', (s, m) => s.write(ok(m).replace(/\r\n/g, '\n'))],
  ['a head of 100 KiB in one write', (s, m) => s.write(ok(m, `x-big: ${'b'.repeat(100 * 1024)}\r\n`))],
  ['a status line that is not HTTP', (s, m) => s.write(`HTTP/2 200\r\ncontent-length: 2\r\n\r\n${m}`)],
  ['a header line with no colon', (s, m) => s.write(ok(m).replace('content-type:', 'content-type'))],
  ['obsolete line folding', (s, m) => s.write(ok(m, 'x-fold: a\r\n b\r\n'))],
  ['a space before the colon', (s, m) => s.write(ok(m).replace('content-type:', 'content-type :'))],
  ['a control character in a value', (s, m) => s.write(ok(m, 'x-ctl: a\x01b\r\n'))],
  ['the connection closed with no answer', (s) => s.end()],
  ['the connection reset with no answer', (s) => s.resetAndDestroy()],
];

/**
 * Broken after body bytes may have reached the client: never retried (a second answer
 * cannot be spliced onto the first), so the client gets the bytes sent and a cut it can
 * see (its framing does not end), never an empty reply and never another client's bytes.
 */
const CUT: Array<[string, Reply]> = [
  [
    'a Content-Length of 291, a few bytes, then FIN',
    (s) => s.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 291\r\n\r\n{"id"'),
  ],
  ['chunked, a first chunk, then FIN', (s) => s.write(`${chunkedHead}5\r\n{"id"\r\n`, () => setTimeout(() => s.end(), 50))],
];

/** A worker that answers generation with `reply`, and load polls and /v1/models as an engine would. */
async function worker(reply: Reply): Promise<RawServer & { posts: Array<{ conn: number; marker: string }> }> {
  const posts: Array<{ conn: number; marker: string }> = [];
  let previous = '';
  const server = await rawHttpServer(({ conn, head, body: text, socket }) => {
    if (head.startsWith('GET /v1/models ')) {
      const b = JSON.stringify({ object: 'list', data: [{ id: model, object: 'model' }] });
      return void socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${b.length}\r\n\r\n${b}`);
    }
    if (head.startsWith('GET ')) return void socket.write('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
    const marker = /mk-[a-z0-9-]+/.exec(text)?.[0] ?? '';
    posts.push({ conn, marker });
    reply(socket, marker, { previous });
    previous = marker;
  });
  return Object.assign(server, { posts });
}

const good: Reply = (s, m) => s.write(ok(m));

interface Seen {
  status: number;
  code: string | undefined;
  text: string;
  /** The response arrived whole (its framing ended), not cut. */
  complete: boolean;
}

/** One client's request on a connection of its own; the bytes it got back. */
function ask(url: string, marker: string): Promise<Seen> {
  return new Promise((resolve) => {
    const payload = JSON.stringify({ model, messages: [{ role: 'user', content: marker }], max_tokens: 1 });
    const req = httpRequest(
      `${url}/v1/chat/completions`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('close', () =>
          resolve({
            status: res.statusCode ?? 0,
            code: res.headers['x-router-error-code'] as string | undefined,
            text: Buffer.concat(chunks).toString(),
            complete: res.complete,
          }),
        );
      },
    );
    // An empty reply (a close with no status line) is what must never happen.
    req.on('error', () => resolve({ status: 0, code: undefined, text: '', complete: false }));
    req.end(payload);
  });
}

let router: Router | undefined;
let servers: RawServer[] = [];
afterEach(async () => {
  await router?.close();
  router = undefined;
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function run(reply: Reply, withGood: boolean, tag: string) {
  const hostile = await worker(reply);
  const fine = withGood ? await worker(good) : undefined;
  servers.push(hostile, ...(fine ? [fine] : []));
  const log = memoryLogger();
  // Round robin over both, no breaker: every request that lands on the hostile worker meets its framing.
  router = await startTestRouter(
    [hostile.url, ...(fine ? [fine.url] : [])],
    { policy: 'round_robin', modelId: model, cbThreshold: 0 },
    log,
  );
  const markers = Array.from({ length: CLIENTS }, (_, i) => `mk-${tag}-${i}`);
  const seen = await Promise.all(markers.map((m) => ask(router!.url, m)));
  return { hostile, fine, log, markers, seen };
}

/** The one assertion that matters: each client has its own answer or the router's envelope. */
function ownOrEnvelope(markers: readonly string[], seen: readonly Seen[], envelopeOnly: boolean): void {
  seen.forEach((s, i) => {
    const others = markers.filter((_, j) => j !== i);
    for (const o of others) expect(s.text, `client ${i} got ${o}'s bytes`).not.toContain(`"${o}"`);
    expect(s.status, `client ${i}: an empty reply`).not.toBe(0);
    if (s.status === 200 && !envelopeOnly) {
      expect(JSON.parse(s.text)).toMatchObject({ marker: markers[i] });
    } else {
      expect(s.status).toBe(502);
      expect(['upstream_unreachable', 'upstream_body_incomplete']).toContain(s.code);
      expect(JSON.parse(s.text)).toMatchObject({ error: { code: s.code } });
    }
  });
}

describe("the router's HTTP/1.1 client against exact framings (RFC 9112 section 6, every 1xx)", () => {
  it.each(VALID)('%s: each client gets its own answer', async (name, reply) => {
    const { markers, seen, hostile } = await run(reply, true, `v${VALID.findIndex((v) => v[0] === name)}`);
    ownOrEnvelope(markers, seen, false);
    for (const s of seen) expect(s.status).toBe(200);
    expect(hostile.posts.length).toBeGreaterThan(0);
  });

  it.each(BROKEN)("%s: a retry answers each client, never another's bytes, and the connection is not reused", async (name, reply) => {
    const tag = `b${BROKEN.findIndex((v) => v[0] === name)}`;
    const { markers, seen, hostile, log } = await run(reply, true, tag);
    ownOrEnvelope(markers, seen, false);
    // Every client that met the broken worker was answered by the other one.
    for (const s of seen) expect(s.status).toBe(200);
    expect(hostile.posts.length).toBeGreaterThan(0);
    // Once broken, never used again: one generation request per connection.
    const perConn = new Map<number, number>();
    for (const p of hostile.posts) perConn.set(p.conn, (perConn.get(p.conn) ?? 0) + 1);
    expect([...perConn.values()].every((n) => n === 1)).toBe(true);
    // And the router said so.
    expect(log.lines.some((l) => l.level === 'warn' && l.fields?.worker === hostile.url)).toBe(true);
  });

  it.each(CUT)(
    "%s: each client gets the bytes sent and a visible cut, never an empty reply or another client's bytes",
    async (name, reply) => {
      const { markers, seen } = await run(reply, true, `c${CUT.findIndex((v) => v[0] === name)}`);
      seen.forEach((s, i) => {
        for (const o of markers.filter((_, j) => j !== i)) expect(s.text).not.toContain(`"${o}"`);
        expect(s.status).toBe(200);
        // Its own whole answer (from the other worker), or the broken one's first bytes, cut.
        if (s.complete) expect(JSON.parse(s.text)).toMatchObject({ marker: markers[i] });
        else expect(s.text).toBe('{"id"');
      });
      expect(seen.some((s) => !s.complete)).toBe(true);
    },
  );

  it.each(BROKEN)("%s, with no other worker: each client gets the router's 502, promptly", async (name, reply) => {
    const t0 = Date.now();
    const { markers, seen } = await run(reply, false, `a${BROKEN.findIndex((v) => v[0] === name)}`);
    ownOrEnvelope(markers, seen, true);
    // Not the 5-minute request timeout: a broken head or body is known at once.
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});
