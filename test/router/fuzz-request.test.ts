import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import { API_ERROR_CODES } from '../../src/router/api-error/api-error.js';
import { Rng } from '../../src/sim/rng.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { memoryLogger, startTestRouter } from '../helpers/router.js';

/**
 * The request parser and the HTTP edge under a seeded fuzz, over real sockets to a
 * real router in front of simulated engines: well-formed requests with fuzzed
 * methods, targets, versions, headers and bodies; broken request lines and header
 * blocks; header overflows; malformed chunking; pipelining; slow headers and bodies.
 * Every request must be answered, never with a 5xx, every router error must be a
 * catalogued code with its status, and nothing may be left behind.
 */
let fleet: SimFleet;
let router: Router;
const log = memoryLogger();
const TOKEN = 'fuzz-token';

beforeAll(async () => {
  fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 500 });
  router = await startTestRouter(
    fleet.urls,
    { clientHeaderTimeoutSecs: 0.3, clientRequestTimeoutSecs: 0.6, maxBodyBytes: 64 * 1024, adminToken: TOKEN },
    log,
  );
});
afterAll(async () => {
  await router.close();
  await fleet.close();
});

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)]!;
const randomBytes = (rng: Rng, n: number): Buffer => Buffer.from(Array.from({ length: n }, () => rng.int(256)));
const printable = (rng: Rng, n: number): string => Array.from({ length: n }, () => String.fromCharCode(32 + rng.int(95))).join('');

const METHODS = [
  'GET',
  'GET',
  'GET',
  'POST',
  'POST',
  'POST',
  'HEAD',
  'OPTIONS',
  'PUT',
  'DELETE',
  'PATCH',
  'TRACE',
  'CONNECT',
  'FOO',
  'get',
  'G\u0000T',
  '',
];
const PATHS = [
  '/v1/chat/completions',
  '/v1/completions',
  '/generate',
  '/v1/models',
  '/healthz',
  '/readyz',
  '/metrics',
  '/admin/state',
  '/admin/stream?interval_ms=60000',
  '/nope',
  '*',
  '/',
];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', 'HTTP/1', 'http/1.1', ''];
const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=z',
  '',
  'application/jsonx',
  '\u00ff',
];
const AUTH = [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, 'Bearer wrong', 'Basic Zm9vOmJhcg==', '', `BEARER   ${TOKEN}`];
const BODIES: Record<string, unknown>[] = [
  { messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 },
  {
    messages: [
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ],
    max_tokens: 1,
    stream: true,
  },
  { prompt: 'complete this', max_tokens: 2 },
  { prompt: [1, 2, 3], max_tokens: 1, stream: true },
  { text: 'native', sampling_params: { max_new_tokens: 1 } },
  { input_ids: [5, 6, 7], sampling_params: { max_new_tokens: 1 }, stream: true },
];
const WEIRD: unknown[] = [null, true, 0, -1, 1e308, 'x', '', [], {}, [null], 'ü\u0000\ud800', 'm'.repeat(5000)];

function fuzzTarget(rng: Rng): string {
  const k = rng.int(10);
  if (k < 6) return pick(rng, PATHS);
  if (k === 6) return `/admin/stream?interval_ms=${pick(rng, ['99999999999', '-5', '1.5', 'abc', '', '100', '%00', '1e9'])}`;
  if (k === 7) return `/${printable(rng, rng.int(60)).replace(/[\s#]/g, '')}`;
  if (k === 8) return `/v1/models?${'a'.repeat(rng.int(3) === 0 ? 9000 : 20)}=%ZZ`;
  return `http://router${pick(rng, PATHS)}`;
}

function fuzzBody(rng: Rng): Buffer {
  const base = structuredClone(pick(rng, BODIES));
  const kind = rng.int(6);
  if (kind === 0) return randomBytes(rng, rng.int(120));
  const text = JSON.stringify(base);
  if (kind === 1) return Buffer.from(text.slice(0, rng.int(text.length)));
  if (kind === 2) {
    const b = Buffer.from(text);
    for (let i = 0; i < 1 + rng.int(3); i++) b[rng.int(b.length)] = rng.int(256);
    return b;
  }
  if (kind === 3) {
    const keys = [...Object.keys(base), 'model', 'messages', 'prompt', 'stream', 'input_ids', 'text'];
    base[pick(rng, keys)] = pick(rng, WEIRD);
  }
  if (kind === 4 && rng.int(4) === 0) return Buffer.from(JSON.stringify({ ...base, pad: 'p'.repeat(70 * 1024) })); // over --max-body-bytes
  return Buffer.from(JSON.stringify(base));
}

/** One well-formed-ish request, fuzzed in every part; `close` asks the server to close after answering. */
function fuzzRequest(rng: Rng, close: boolean): Buffer {
  const method = pick(rng, METHODS);
  const target = fuzzTarget(rng);
  const version = pick(rng, VERSIONS);
  const lines: string[] = [`${method} ${target} ${version}`.trimEnd()];
  if (rng.int(20) !== 0) lines.push('host: router');
  const body = method === 'POST' || rng.int(8) === 0 ? fuzzBody(rng) : Buffer.alloc(0);
  const chunked = body.length > 0 && rng.int(5) === 0;
  const ct = pick(rng, CONTENT_TYPES);
  if (ct !== '' || rng.int(2) === 0) lines.push(`content-type: ${ct}`);
  if (target.startsWith('/admin') || rng.int(10) === 0) lines.push(`authorization: ${pick(rng, AUTH)}`);
  if (chunked) lines.push('transfer-encoding: chunked');
  else if (body.length > 0 || rng.int(6) === 0) {
    const cl = rng.int(12);
    // Mostly right; sometimes too short, missing, garbage or doubled (a smuggling classic).
    if (cl < 8) lines.push(`content-length: ${body.length}`);
    else if (cl === 8) lines.push(`content-length: ${Math.max(0, body.length - 3)}`);
    else if (cl === 9) lines.push('content-length: abc');
    else if (cl === 10) lines.push(`content-length: ${body.length}`, `content-length: ${body.length + 1}`);
    else lines.push(`content-length: ${body.length}`, 'transfer-encoding: chunked');
  }
  const h = rng.int(30);
  if (h === 0)
    lines.push(`x-big: ${'b'.repeat(20_000)}`); // past 16 KiB: 431
  else if (h === 1) lines.push('no colon here');
  else if (h === 2) lines.push('bad name: x'.replace(' ', '\u0001'));
  else if (h === 3)
    lines.push('x-folded: a', ' continued'); // obs-fold
  else if (h === 4) lines.push('expect: 100-continue');
  else if (h === 5) lines.push('expect: teapot');
  else if (h === 6) lines.push('upgrade: websocket', 'connection: upgrade');
  else if (h === 7) lines.push(`x-ctl: a\u0000b`);
  if (close) lines.push('connection: close');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  if (!chunked) return Buffer.concat([head, body]);
  const good = rng.int(3) !== 0;
  const size = good
    ? body.length.toString(16)
    : pick(rng, ['zz', '-1', 'fffffffffffffffff', `${body.length.toString(16)};${'e'.repeat(20_000)}`]);
  return Buffer.concat([head, Buffer.from(`${size}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
}

function garbage(rng: Rng): Buffer {
  const k = rng.int(4);
  if (k === 0) return randomBytes(rng, 1 + rng.int(300));
  if (k === 1) return Buffer.from(`${printable(rng, 1 + rng.int(80))}\r\n\r\n`);
  if (k === 2) return Buffer.from(`GET /healthz HTTP/1.1\r\nhost: r\r\n${printable(rng, rng.int(40))}\r\nconnection: close\r\n\r\n`);
  return Buffer.from(`${pick(rng, METHODS)} ${'/x'.repeat(rng.int(12_000))} HTTP/1.1\r\nhost: r\r\nconnection: close\r\n\r\n`);
}

interface Outcome {
  statuses: number[];
  text: string;
  answered: boolean;
}

/** Write `pieces` (with pauses), read until the server closes (or an admin stream's first event); answered = a final status came. */
function exchange(pieces: Array<[Buffer, number]>, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const s = connect(Number(new URL(router.url).port), '127.0.0.1');
    const got: Buffer[] = [];
    const done = (): void => {
      clearTimeout(timer);
      s.destroy();
      const text = Buffer.concat(got).toString('latin1');
      const statuses = [...text.matchAll(/(?:^|\r\n)HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
      resolve({ statuses, text, answered: statuses.some((st) => st >= 200) });
    };
    const timer = setTimeout(done, timeoutMs);
    s.on('data', (c: Buffer) => {
      got.push(c);
      // An admin stream never ends by itself: its first event is the answer.
      if (c.includes('event: state')) done();
    });
    s.on('end', done);
    s.on('error', done);
    s.on('connect', async () => {
      for (const [bytes, pause] of pieces) {
        if (s.destroyed) return;
        s.write(bytes);
        if (pause) await new Promise((r) => setTimeout(r, pause));
      }
    });
  });
}

/** Check every response in a connection's bytes: router errors carry a catalogued code with its status and the envelope. */
function checkResponses(o: Outcome, what: string): void {
  expect(o.answered, `${what}: never answered; got ${JSON.stringify(o.text.slice(0, 300))}`).toBe(true);
  expect(o.statuses.length, `${what}: no status line in ${JSON.stringify(o.text.slice(0, 200))}`).toBeGreaterThan(0);
  for (const st of o.statuses) expect(st, `${what}: ${JSON.stringify(o.text.slice(0, 300))}`).toBeLessThan(500);
  for (const m of o.text.matchAll(/HTTP\/1\.1 (\d{3}) [^\r]*\r\n((?:[^\r]+\r\n)*?)x-router-error-code: (\S+)\r\n/gi)) {
    const entry = API_ERROR_CODES[m[3] as keyof typeof API_ERROR_CODES];
    expect(entry, `${what}: uncatalogued code ${m[3]}`).toBeDefined();
    expect(entry.status, `${what}: ${m[3]}`).toBe(Number(m[1]));
  }
}

describe('fuzz: the request parser and the HTTP edge over real sockets', () => {
  // About 5 s on an idle machine; the timeout leaves room for a loaded CI runner.
  it('2,800 seeded cases: every request answered, no 5xx, only catalogued errors, no leak', { timeout: 20_000 }, async () => {
    const rng = new Rng(20261130);
    // Warm up (JIT, pools) before the memory baseline.
    for (let i = 0; i < 100; i++) await exchange([[fuzzRequest(rng, true), 0]], 3000);
    const rssBefore = process.memoryUsage().rss;
    let cases = 0;
    const kinds = new Map<string, number>();
    const statusCount = new Map<number, number>();
    const note = (kind: string, o: Outcome): void => {
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      for (const st of o.statuses) statusCount.set(st, (statusCount.get(st) ?? 0) + 1);
    };

    // Slow clients, all at once: headers (past 0.3 s) or a body (past 0.6 s) that trickle in get 408.
    const slowHead = Buffer.from('GET /healthz HTTP/1.1\r\nhost: router\r\nx-slow: yes\r\nconnection: close\r\n\r\n');
    const slowBody = Buffer.from(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: router\r\ncontent-type: application/json\r\ncontent-length: 200\r\nconnection: close\r\n\r\n{"messages":[`,
    );
    const slow = Array.from({ length: 24 }, (_, i) => {
      const pieces: Array<[Buffer, number]> =
        i % 2 === 0
          ? [
              [slowHead.subarray(0, 2 + ((i * 7) % (slowHead.length - 4))), 900],
              [slowHead.subarray(2 + ((i * 7) % (slowHead.length - 4))), 0],
            ]
          : [[slowBody, 1200]];
      return exchange(pieces, 4000).then((o) => ({ o, i }));
    });

    for (let batch = 0; batch < 24; batch++) {
      const work = Array.from({ length: 110 }, () => {
        const k = rng.int(10);
        if (k < 7) {
          const req = fuzzRequest(rng, true);
          // Sometimes in small pieces, as a slow network delivers it.
          const pieces: Array<[Buffer, number]> =
            rng.int(5) === 0
              ? [
                  [req.subarray(0, 7), 5],
                  [req.subarray(7), 0],
                ]
              : [[req, 0]];
          return exchange(pieces, 3000).then((o) => [`request ${JSON.stringify(req.toString('latin1').slice(0, 300))}`, o] as const);
        }
        if (k < 9) {
          const g = garbage(rng);
          return exchange([[g, 0]], 3000).then((o) => [`garbage ${JSON.stringify(g.toString('latin1').slice(0, 120))}`, o] as const);
        }
        // Pipelined: a keep-alive request, then one that closes.
        const both = Buffer.concat([fuzzRequest(rng, false), fuzzRequest(rng, true)]);
        return exchange([[both, 0]], 3000).then((o) => [`pipelined ${JSON.stringify(both.toString('latin1').slice(0, 600))}`, o] as const);
      });
      for (const [kind, o] of await Promise.all(work)) {
        cases++;
        note(kind.split(' ', 1)[0]!, o);
        checkResponses(o, kind);
      }
    }
    for (const { o, i } of await Promise.all(slow)) {
      cases++;
      note('slow', o);
      checkResponses(o, `slow #${i}`);
      expect(o.statuses).toContain(408);
    }

    expect(cases).toBe(24 * 110 + 24);
    // The mix reached every part of the edge.
    for (const st of [200, 204, 400, 401, 404, 405, 408, 413, 415, 431])
      expect(statusCount.get(st) ?? 0, `status ${st}`).toBeGreaterThan(0);
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([]);
    // Every connection the fuzz opened is gone from the router too (none held by a stuck parser).
    const open = (router as unknown as { sockets: Set<unknown> }).sockets;
    await eventually(async () => open.size === 0, 3000);
    expect(router.inflight).toBe(0);
    expect(router.state().workers.map((w) => w.inflight)).toEqual([0, 0]);
    expect((await rawRequest(`${router.url}/healthz`)).status).toBe(200);
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(rssGrowth, `RSS grew ${Math.round(rssGrowth / 2 ** 20)} MiB`).toBeLessThan(64 * 2 ** 20);
  });
});
