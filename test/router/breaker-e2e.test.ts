/**
 * The breaker's verdicts and the router's error answers over real HTTP
 * (docs/retries-and-breaker.md): a request is a success only when its response
 * completed; a stream the engine cut, or that went silent past the timeout, is a
 * failure; a failure the router caused itself (an `Expect` header undici refuses, a
 * pool it closed) never counts against a worker; and when every engine fails the
 * client gets the router's envelope, never an engine's body.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { request } from 'undici';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import { parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';
import { closeServer, listenLoopback, post, put, rawRequest } from '../helpers/http.js';
import { memoryLogger, startTestRouter } from '../helpers/router.js';

const model = 'sim-llama-3.1-8b';

type Mode = 'ok' | 'cut' | 'stall' | { status: number };

/**
 * A misbehaving engine in a few lines of node:http: it serves /v1/models, and
 * answers each generation request as the next mode says (the last one repeats).
 */
class RogueEngine {
  readonly server: Server;
  readonly received: IncomingHttpHeaders[] = [];
  modes: Mode[] = ['ok'];

  constructor() {
    this.server = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model' }] }));
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      req.resume();
      req.on('end', () => {
        this.received.push(req.headers);
        const mode = this.modes.length > 1 ? this.modes.shift()! : this.modes[0]!;
        if (typeof mode === 'object') {
          res.writeHead(mode.status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ object: 'error', message: 'the engine says no', type: 'EngineError', code: mode.status }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(
          `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hel' } }] })}\n\n`,
        );
        if (mode === 'ok') res.end('data: [DONE]\n\n');
        else if (mode === 'cut') setTimeout(() => res.socket?.destroy(), 5);
        // 'stall': nothing more, until the router gives up and closes the connection.
      });
    });
  }

  listen(): Promise<string> {
    return listenLoopback(this.server);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }
}

let router: Router | undefined;
let fleet: SimFleet | undefined;
const rogues: RogueEngine[] = [];
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  await Promise.all(rogues.splice(0).map((e) => e.close()));
  router = fleet = undefined;
});

async function rogueRouter(count: number, overrides: Partial<RouterConfig>, log = memoryLogger()) {
  const engines = Array.from({ length: count }, () => new RogueEngine());
  rogues.push(...engines);
  const urls = await Promise.all(engines.map((e) => e.listen()));
  router = await startTestRouter(urls, { modelId: model, policy: 'round_robin', ...overrides }, log);
  return { engines, urls, router, log };
}

/** Stream a chat completion; report the status and whether the router ended it with an error event. */
async function stream(url: string): Promise<{ status: number; errorEvent: boolean; done: boolean; code: string | undefined }> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, stream: true }),
  });
  const text = await res.body.text().catch(() => '');
  return {
    status: res.statusCode,
    errorEvent: text.includes('"upstream_body_incomplete"'),
    done: text.includes('data: [DONE]'),
    code: res.headers['x-router-error-code'] as string | undefined,
  };
}

const breakerOf = (r: Router, url: string) => r.state().workers.find((w) => w.url === url)!.breaker;

async function retries(r: Router, reason?: string): Promise<number> {
  const m = parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text);
  return sumSamples(m.get('sgl_router_retries_total'), (l) => reason === undefined || l.reason === reason) ?? 0;
}

describe('the breaker counts a request when it is over', () => {
  it('streams the engine cuts open the breaker at the threshold (a success is not booked at the headers)', async () => {
    const { engines, urls, router: r } = await rogueRouter(1, { cbThreshold: 3, cbCoolDownSecs: 30 });
    engines[0]!.modes = ['cut'];
    for (let i = 1; i <= 3; i++) {
      const s = await stream(r.url);
      expect(s).toMatchObject({ status: 200, errorEvent: true, done: false });
      expect(breakerOf(r, urls[0]!)).toBe(i < 3 ? 'closed' : 'open');
    }
    // Open: the worker is out of the pool and the next request is the router's 503.
    const s = await stream(r.url);
    expect(s).toMatchObject({ status: 503, code: 'no_healthy_workers' });
    // Cut streams had reached the client, so none was sent again.
    expect(engines[0]!.received).toHaveLength(3);
    expect(await retries(r)).toBe(0);
  });

  it('a completed stream resets the streak; cuts must be consecutive', async () => {
    const { engines, urls, router: r } = await rogueRouter(1, { cbThreshold: 3, cbCoolDownSecs: 30 });
    engines[0]!.modes = ['cut', 'cut', 'ok', 'cut', 'cut', 'cut'];
    const seen = [];
    for (let i = 0; i < 5; i++) seen.push(await stream(r.url));
    expect(seen.map((s) => s.done)).toEqual([false, false, true, false, false]);
    expect(breakerOf(r, urls[0]!)).toBe('closed');
    await stream(r.url);
    expect(breakerOf(r, urls[0]!)).toBe('open');
  });

  it('a request that picks a half-open worker whose probe is in flight is retried elsewhere (retries{breaker_open})', async () => {
    const { engines, urls, router: r } = await rogueRouter(2, { cbThreshold: 1, cbCoolDownSecs: 0.2, requestTimeoutSecs: 0.5 });
    const [a, b] = engines as [RogueEngine, RogueEngine];
    a.modes = [{ status: 500 }, 'stall'];
    // Round robin over [a, b]: a fails (its breaker opens) and the retry goes to b.
    expect(await stream(r.url)).toMatchObject({ status: 200, done: true });
    expect(breakerOf(r, urls[0]!)).toBe('open');
    await new Promise((resolve) => setTimeout(resolve, 300)); // the cool-down passes: a is back, half-open on its next request
    const probe = stream(r.url); // a's probe, which stalls
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(breakerOf(r, urls[0]!)).toBe('half_open');
    expect(await stream(r.url)).toMatchObject({ status: 200, done: true }); // b
    expect(await stream(r.url)).toMatchObject({ status: 200, done: true }); // a refuses (probe in flight): retried on b
    expect(await retries(r, 'breaker_open')).toBe(1);
    expect(await retries(r, 'status_500')).toBe(1);
    expect(await probe).toMatchObject({ status: 200, errorEvent: true }); // the stalled probe is cut…
    expect(breakerOf(r, urls[0]!)).toBe('open'); // …and reopens the breaker
    expect(a.received).toHaveLength(2);
    expect(b.received).toHaveLength(3);
  });

  it('a stream that goes silent past the request timeout is cut with an error event, and is a failure', async () => {
    const { engines, urls, router: r } = await rogueRouter(1, { cbThreshold: 2, cbCoolDownSecs: 30, requestTimeoutSecs: 0.3 });
    engines[0]!.modes = ['stall'];
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      expect(await stream(r.url)).toMatchObject({ status: 200, errorEvent: true, done: false });
      expect(performance.now() - t0).toBeLessThan(2000);
    }
    expect(breakerOf(r, urls[0]!)).toBe('open');
    expect(engines[0]!.received).toHaveLength(2);
  });
});

/** POST with `Expect: 100-continue` the way curl does for big bodies: headers first, the body only after 100 Continue. */
function postExpectContinue(url: string, body: Buffer): Promise<{ status: number; continued: boolean; text: string }> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, continued, text }));
      },
    );
    req.on('continue', () => {
      continued = true;
      req.end(body);
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

/** A chat body of `bytes` bytes: a small prompt, padded with JSON whitespace (as a large client payload would be). */
function bodyOf(bytes: number, content: string): Buffer {
  const json = JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 2 });
  return Buffer.from(json + ' '.repeat(bytes - json.length));
}

describe('Expect: 100-continue', () => {
  it('six 2 MiB requests with Expect: 100-continue succeed and leave both breakers closed', async () => {
    fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { cbThreshold: 1, cbCoolDownSecs: 30 });
    expect(router.config.maxBodyBytes).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    for (let i = 0; i < 6; i++) {
      const r = await postExpectContinue(`${router.url}/v1/chat/completions`, bodyOf(2 * 1024 * 1024, `big request ${i}`));
      expect(r.continued).toBe(true); // the router's HTTP server answered 100 Continue itself
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text)).toMatchObject({ object: 'chat.completion' });
    }
    expect(router.state().workers.map((w) => w.breaker)).toEqual(['closed', 'closed']);
    expect(await retries(router)).toBe(0);
    expect(
      (await post(`${router.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'ordinary' }], max_tokens: 2 })).status,
    ).toBe(200);
  });

  it('the expectation stops at the router: the engine sees no expect header and the exact body length', async () => {
    const { engines, router: r } = await rogueRouter(1, { cbThreshold: 1 });
    const body = bodyOf(1_500_000, 'relay me');
    const res = await postExpectContinue(`${r.url}/v1/chat/completions`, body);
    expect(res).toMatchObject({ status: 200, continued: true });
    const seen = engines[0]!.received[0]!;
    expect(seen.expect).toBeUndefined();
    expect(seen['content-length']).toBe(String(body.length));
    expect(seen['content-type']).toBe('application/json');
  });

  it('a failure the router causes itself is a 500 internal_error, logged, and never a breaker failure', async () => {
    const log = memoryLogger();
    const { engines, urls, router: r } = await rogueRouter(1, { cbThreshold: 1 }, log);
    // The router's own connection pool to the worker, closed under it: undici refuses to send.
    await r.registry.workers[0]!.pool.close();
    const res = await post(`${r.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'x' }], max_tokens: 2 });
    expect(res.status).toBe(500);
    expect(res.headers['x-router-error-code']).toBe('internal_error');
    expect(res.json()).toEqual({ error: { type: 'server_error', code: 'internal_error', message: 'internal error' } });
    expect(breakerOf(r, urls[0]!)).toBe('closed');
    expect(engines[0]!.received).toHaveLength(0);
    expect(log.lines.some((l) => l.level === 'error' && /router error/.test(l.msg))).toBe(true);
    expect(await retries(r)).toBe(0);
  });
});

describe('when every engine fails, the client gets the router envelope', () => {
  const envelope = (code: string) => ({ error: { type: 'server_error', code, message: expect.any(String) } });

  it('all engines 500: one retry, then 502 upstream_error with the upstream status, no engine body', async () => {
    fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { policy: 'round_robin' });
    for (const u of fleet.urls) await put(`${u}/sim/config`, { failure_rate: 1 });
    for (const streamIt of [false, true]) {
      const before = await retries(router, 'status_500');
      const res = await post(`${router.url}/v1/chat/completions`, {
        messages: [{ role: 'user', content: 'doomed' }],
        max_tokens: 2,
        stream: streamIt,
      });
      expect(res.status).toBe(502);
      expect(res.headers['x-router-error-code']).toBe('upstream_error');
      expect(res.headers['x-router-upstream-status']).toBe('500');
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.json()).toEqual(envelope('upstream_error'));
      expect(res.text).not.toContain('failure injected');
      expect((await retries(router, 'status_500')) - before).toBe(1);
    }
  });

  it('a lone failing engine: no retry possible, still the envelope', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls);
    await put(`${fleet.urls[0]}/sim/config`, { failure_rate: 1 });
    const res = await post(`${router.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'alone' }], max_tokens: 2 });
    expect(res.status).toBe(502);
    expect(res.json()).toEqual(envelope('upstream_error'));
    expect(await retries(router)).toBe(0);
  });

  it('engines answering 503 and 429: 503 upstream_overloaded, and backpressure never opens a breaker', async () => {
    const { engines, urls, router: r } = await rogueRouter(2, { cbThreshold: 1 });
    engines[0]!.modes = [{ status: 503 }];
    engines[1]!.modes = [{ status: 429 }];
    for (let i = 0; i < 4; i++) {
      const res = await post(`${r.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'busy' }], max_tokens: 2 });
      expect(res.status).toBe(503);
      expect(res.headers['x-router-error-code']).toBe('upstream_overloaded');
      expect(['503', '429']).toContain(res.headers['x-router-upstream-status']);
      expect(res.json()).toEqual(envelope('upstream_overloaded'));
    }
    expect(urls.map((u) => breakerOf(r, u))).toEqual(['closed', 'closed']);
    expect(engines[0]!.received.length + engines[1]!.received.length).toBe(8); // each request: one try, one retry
  });

  it('engines refusing connections: 502 upstream_unreachable after one retry', async () => {
    fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { policy: 'round_robin' });
    await fleet.close();
    const res = await post(`${router.url}/v1/chat/completions`, {
      model,
      messages: [{ role: 'user', content: 'nobody home' }],
      max_tokens: 2,
    });
    expect(res.status).toBe(502);
    expect(res.json()).toEqual(envelope('upstream_unreachable'));
    expect(await retries(router, 'connect')).toBe(1);
  });
});
