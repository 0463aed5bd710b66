import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { request } from 'undici';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import { API_ERROR_CODES, ApiErrors, ProtocolErrors } from '../../src/router/api-error/api-error.js';
import { resolveConfig } from '../../src/config/index.js';
import { rawRequest } from '../helpers/http.js';
import { memoryLogger, startTestRouter } from '../helpers/router.js';
import { head, rawExchange } from './raw-http.js';

let fleet: SimFleet;
let router: Router;
const log = memoryLogger();
const CHAT = JSON.stringify({ messages: [{ role: 'user', content: 'edge' }], max_tokens: 2 });

beforeAll(async () => {
  fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 50 });
  router = await startTestRouter(fleet.urls, { clientHeaderTimeoutSecs: 0.4, clientRequestTimeoutSecs: 0.8 }, log);
});
afterAll(async () => {
  await router.close();
  await fleet.close();
});

const errorLines = (): unknown[] => log.lines.filter((l) => l.level === 'error');

function expectEnvelope(r: { status: number | undefined; json(): unknown }, status: number, code: string): void {
  expect(r.status).toBe(status);
  expect(r.json()).toMatchObject({ error: { type: status < 500 ? 'invalid_request_error' : 'server_error', code } });
}

describe('/admin/stream interval_ms', () => {
  it.each(['99999999999', 'abc', '1.5', '1e3', '50', '99', '60001', '-1', '', ' 500', '0x100'])(
    'refuses %j with a 400 envelope',
    async (q) => {
      const r = await rawRequest(`${router.url}/admin/stream?interval_ms=${encodeURIComponent(q)}`);
      expect(r.status).toBe(400);
      expect(r.headers['x-router-error-code']).toBe('bad_request');
      expect(r.json()).toMatchObject({ error: { code: 'bad_request', message: expect.stringContaining('from 100 to 60000') } });
    },
  );

  it('accepts the bounds, and sends at the asked pace (not every millisecond)', async () => {
    for (const q of ['60000', '100']) {
      const ac = new AbortController();
      const res = await request(`${router.url}/admin/stream?interval_ms=${q}`, { signal: ac.signal });
      expect(res.statusCode).toBe(200);
      let events = 0;
      const t = setTimeout(() => ac.abort(), 550);
      try {
        for await (const c of res.body) events += (c as Buffer).toString().split('event: state').length - 1;
      } catch {
        // aborted on purpose
      }
      clearTimeout(t);
      if (q === '60000') expect(events).toBe(1);
      else {
        expect(events).toBeGreaterThanOrEqual(4);
        expect(events).toBeLessThanOrEqual(8);
      }
    }
  });
});

describe('errors at the protocol edge', () => {
  it('a bad request line gets a 400 envelope and the connection closes', async () => {
    const r = await rawExchange(router.url, 'GARBAGE / HTTP/1.1\r\n\r\n');
    expectEnvelope(r, 400, 'bad_request');
    expect(r.text).toMatch(/x-router-error-code: bad_request/);
    expect(r.closedByServer).toBe(true);
    const r2 = await rawExchange(router.url, 'GET /healthz HTTP/9.9\r\n\r\n');
    expectEnvelope(r2, 400, 'bad_request');
  });

  it('CONNECT gets a 405 envelope instead of a silent close; HTTP/1.1 without Host a 400 envelope', async () => {
    const c = await rawExchange(router.url, 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n');
    expectEnvelope(c, 405, 'method_not_allowed');
    expect(c.text).toMatch(/allow: GET, HEAD, POST, OPTIONS/);
    const h = await rawExchange(router.url, 'GET /healthz HTTP/1.1\r\n\r\n');
    expectEnvelope(h, 400, 'bad_request');
    expect((await rawExchange(router.url, 'GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(200);
  });

  it('an unknown Expect is ignored; an Upgrade is served as HTTP/1.1 and the connection closed', async () => {
    expect((await rawExchange(router.url, head('GET /healthz HTTP/1.1', { expect: 'teapot', connection: 'close' }))).status).toBe(200);
    const up = await rawExchange(
      router.url,
      head('GET /healthz HTTP/1.1', { upgrade: 'h2c', connection: 'Upgrade, HTTP2-Settings', 'http2-settings': 'AAMAAABkAAQAAP__' }) +
        head('GET /readyz HTTP/1.1'),
    );
    expect(up.status).toBe(200);
    expect(up.text).not.toMatch(/HTTP\/1\.1 101/);
    expect(up.closedByServer).toBe(true);
  });

  it('headers over 16 KiB get a 431 envelope', async () => {
    const r = await rawExchange(router.url, head('GET /healthz HTTP/1.1', { 'x-big': 'a'.repeat(20_000) }));
    expectEnvelope(r, 431, 'request_header_fields_too_large');
  });

  it('headers that trickle in past --client-header-timeout-secs get a 408 envelope', async () => {
    const t0 = Date.now();
    const r = await rawExchange(
      router.url,
      [
        ['GET /healthz HTTP/1.1\r\n', 200],
        ['x-a: 1\r\n', 200],
        ['x-b: 2\r\n', 2000],
      ],
      { waitMs: 4000 },
    );
    expectEnvelope(r, 408, 'request_timeout');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a body slower than --client-request-timeout-secs gets a 408 and is not a router error', async () => {
    const before = errorLines().length;
    const r = await rawExchange(
      router.url,
      [
        [head('POST /v1/chat/completions HTTP/1.1', { 'content-type': 'application/json', 'content-length': '100' }), 0],
        ['{"messages":', 2000],
      ],
      { waitMs: 4000 },
    );
    expectEnvelope(r, 408, 'request_timeout');
    expect(errorLines().length).toBe(before);
  });

  it('a client that aborts its upload is no 500 and no error log; a half-closed one gets a 400 envelope', async () => {
    const before = errorLines().length;
    const upload =
      head('POST /v1/chat/completions HTTP/1.1', { 'content-type': 'application/json', 'content-length': '1000' }) + '{"messages": [';
    const aborted = await rawExchange(router.url, [[upload, 100]], { destroyAfter: true });
    expect(aborted.status).toBeUndefined();
    const halfClosed = await rawExchange(router.url, [[upload, 100]], { endAfter: true });
    expectEnvelope(halfClosed, 400, 'bad_request');
    await new Promise((r) => setTimeout(r, 100));
    expect(errorLines().length).toBe(before);
    const metrics = (await rawRequest(`${router.url}/metrics`)).text;
    expect(metrics).not.toMatch(/code="500"/);
    expect(router.inflight).toBe(0);
  });
});

describe('pipelining', () => {
  it('an error for a request queued behind a streaming one waits its turn, and both are answered', async () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'pipelined' }], max_tokens: 30, ignore_eos: true, stream: true });
    const first =
      head('POST /v1/chat/completions HTTP/1.1', {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      }) + body;
    const r = await rawExchange(router.url, first + head('GET /nope HTTP/1.1', { connection: 'close' }), { waitMs: 5000 });
    expect(r.status).toBe(200);
    const done = r.text.indexOf('data: [DONE]');
    const notFound = r.text.indexOf('HTTP/1.1 404');
    expect(done).toBeGreaterThan(0);
    expect(notFound).toBeGreaterThan(done);
    expect(r.text.slice(notFound)).toMatch(/x-router-error-code: not_found/);
    expect(r.closedByServer).toBe(true);
  });
});

describe('methods', () => {
  it('HEAD is GET without a body', async () => {
    const get = await rawRequest(`${router.url}/v1/models`);
    const r = await rawRequest(`${router.url}/v1/models`, { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(get.text)));
    expect((await rawRequest(`${router.url}/readyz`, { method: 'HEAD' })).status).toBe(200);
    expect((await rawRequest(`${router.url}/metrics`, { method: 'HEAD' })).status).toBe(200);
    const stream = await rawRequest(`${router.url}/admin/stream`, { method: 'HEAD' });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream');
  });

  it('OPTIONS answers 204 with Allow, and no CORS grant', async () => {
    const get = await rawRequest(`${router.url}/healthz`, { method: 'OPTIONS' });
    expect(get.status).toBe(204);
    expect(get.headers.allow).toBe('GET, HEAD, OPTIONS');
    const post = await rawRequest(`${router.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(post.status).toBe(204);
    expect(post.headers.allow).toBe('POST, OPTIONS');
    expect(post.headers['access-control-allow-origin']).toBeUndefined();
    const star = await rawExchange(router.url, 'OPTIONS * HTTP/1.1\r\nhost: router\r\nconnection: close\r\n\r\n');
    expect(star.status).toBe(204);
    expect(star.text).toMatch(/allow: GET, HEAD, POST, OPTIONS/i);
  });

  it('other methods get 405 with Allow', async () => {
    const r = await rawRequest(`${router.url}/healthz`, { method: 'DELETE' });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, HEAD, OPTIONS');
    const g = await rawRequest(`${router.url}/generate`, { method: 'GET' });
    expect(g.status).toBe(405);
    expect(g.headers.allow).toBe('POST, OPTIONS');
  });
});

describe('generation content type', () => {
  const send = (contentType: string | undefined) =>
    new Promise<{ status: number; code: string | undefined }>((resolve, reject) => {
      // node:http, not fetch: fetch would add a text/plain content type of its own.
      const { port } = new URL(router.url);
      const s = connect(Number(port), '127.0.0.1');
      let text = '';
      s.on('data', (c) => (text += c.toString()));
      s.on('end', () =>
        resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]), code: /x-router-error-code: (\S+)/.exec(text)?.[1] }),
      );
      s.on('error', reject);
      // No half-close: node:http drops a request whose client sends FIN before the answer.
      s.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: r\r\nconnection: close\r\n${contentType === undefined ? '' : `content-type: ${contentType}\r\n`}content-length: ${Buffer.byteLength(CHAT)}\r\n\r\n${CHAT}`,
      );
    });

  it.each([
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonp',
    'application/json-seq',
    '',
  ])('refuses %j with 415 (a cross-site page can send it without a preflight, or it is not JSON)', async (ct) => {
    expect(await send(ct)).toEqual({ status: 415, code: 'unsupported_media_type' });
  });

  it('refuses a body with no content type (a Blob or ArrayBuffer from a web page)', async () => {
    expect(await send(undefined)).toEqual({ status: 415, code: 'unsupported_media_type' });
  });

  it.each(['application/json', 'Application/JSON; charset=utf-8', ' application/json ;charset=UTF-8'])('accepts %j', async (ct) => {
    expect((await send(ct)).status).toBe(200);
  });
});

describe('router answers', () => {
  it('a 404 for an unknown model does not echo a huge name back', async () => {
    const r2 = await startTestRouter(fleet.urls, { modelId: 'served' });
    try {
      const r = await rawRequest(`${r2.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm'.repeat(100_000), messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(r.status).toBe(404);
      const message = (r.json() as { error: { message: string } }).error.message;
      expect(message.length).toBeLessThan(400);
      expect(message).toContain(`'${'m'.repeat(256)}…'`);
    } finally {
      await r2.close();
    }
  });

  it('the admin token takes the bearer scheme in any case', async () => {
    const r2 = await startTestRouter(fleet.urls, { adminToken: 's3cret' });
    try {
      for (const auth of ['Bearer s3cret', 'bearer s3cret', 'BEARER  s3cret']) {
        expect((await rawRequest(`${r2.url}/admin/state`, { headers: { authorization: auth } })).status, auth).toBe(200);
      }
      for (const auth of ['Bearer wrong', 'Basic s3cret', 's3cret', 'Bearers3cret']) {
        const r = await rawRequest(`${r2.url}/admin/state`, { headers: { authorization: auth } });
        expect(r.status, auth).toBe(401);
        expect(r.headers['www-authenticate']).toBe('Bearer');
      }
    } finally {
      await r2.close();
    }
  });

  it('--max-connections closes connections past the cap', async () => {
    const r2 = await startTestRouter(fleet.urls, { maxConnections: 2 });
    const held = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<ReturnType<typeof connect>>((res) => {
            const s = connect(Number(new URL(r2.url).port), '127.0.0.1', () => res(s));
          }),
      ),
    );
    try {
      await new Promise((r) => setTimeout(r, 50));
      const third = await rawExchange(r2.url, head('GET /healthz HTTP/1.1'), { waitMs: 1000 });
      expect(third.status).toBeUndefined();
      expect(third.closedByServer).toBe(true);
      held[0]!.destroy();
      await new Promise((r) => setTimeout(r, 50));
      expect((await rawExchange(r2.url, head('GET /healthz HTTP/1.1', { connection: 'close' }))).status).toBe(200);
    } finally {
      for (const s of held) s.destroy();
      await r2.close();
    }
  });

  it('refuses --max-connections 0 and non-positive client timeouts at configuration time', async () => {
    for (const argv of [{ 'max-connections': 0 }, { 'client-header-timeout-secs': 0 }, { 'client-request-timeout-secs': -1 }]) {
      const r = await resolveConfig({ argv, env: {} });
      expect(r.errors[0]?.code, JSON.stringify(argv)).toBe('RCTL_E_VALUE_RANGE');
    }
  });
});

describe('the error catalogue', () => {
  const page = readFileSync(new URL('../../man/routerctl-serve.1', import.meta.url), 'utf8').replace(/\\-/g, '-');
  const errors = page.slice(page.indexOf('.SH ERRORS'), page.indexOf('.SH', page.indexOf('.SH ERRORS') + 4));
  const doc = readFileSync(new URL('../../docs/http-edge.md', import.meta.url), 'utf8');

  it('every factory sends a catalogued code with its catalogued status', () => {
    for (const [name, make] of Object.entries(ApiErrors)) {
      const err = (make as (...a: unknown[]) => { status: number; code: keyof typeof API_ERROR_CODES })('x', 1);
      expect(API_ERROR_CODES[err.code]?.status, name).toBe(err.status);
    }
    for (const make of Object.values(ProtocolErrors)) {
      const err = make();
      expect(API_ERROR_CODES[err.code].status).toBe(err.status);
    }
  });

  it('names each entry by its own code, as the HTTP contract sends it', () => {
    expect(Object.entries(API_ERROR_CODES).filter(([name, e]) => name !== e.code)).toEqual([]);
  });

  it.each(Object.entries(API_ERROR_CODES))(
    '%s is listed with its status in man routerctl-serve (ERRORS) and docs/http-edge.md',
    (code, { status }) => {
      expect(errors).toMatch(new RegExp(`^\\.B ${status} ${code}$`, 'm'));
      expect(doc).toMatch(new RegExp(`\\| ${status} \\| \`${code}\` \\|`));
    },
  );
});
