import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import { Rng } from '../../src/sim/rng.js';
import { rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

let fleet: SimFleet;
let router: Router;
beforeAll(async () => {
  fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 200 });
  router = await startTestRouter(fleet.urls, { workerQueueLimit: 4 });
});
afterAll(async () => {
  await router.close();
  await fleet.close();
});

const VALID: Record<string, unknown>[] = [
  { model: 'sim-llama-3.1-8b', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 },
  {
    messages: [
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ],
    max_tokens: 2,
    stream: true,
  },
  { prompt: 'complete this', max_tokens: 2 },
  { prompt: [1, 2, 3, 4, 5], max_tokens: 1, stream: true, stream_options: { include_usage: true } },
  { text: 'native', sampling_params: { max_new_tokens: 2 } },
  { input_ids: [5, 6, 7], sampling_params: { max_new_tokens: 1 }, stream: true },
];
const ROUTES = ['/v1/chat/completions', '/v1/chat/completions', '/v1/completions', '/v1/completions', '/generate', '/generate'];
const WEIRD: unknown[] = [null, true, 0, -1, 1e308, 'x', '', [], {}, [null], { a: 1 }, 'ü\u0000\ud800', 2 ** 53, NaN];

/** One fuzz case: random bytes, a truncated or byte-flipped valid body, or a valid body with a field replaced. */
function fuzzCase(rng: Rng): { route: string; body: Buffer } {
  const i = rng.int(VALID.length);
  const route = rng.next() < 0.8 ? ROUTES[i]! : ROUTES[rng.int(ROUTES.length)]!;
  const base = JSON.stringify(VALID[i]);
  const kind = rng.int(5);
  if (kind === 0) return { route, body: Buffer.from(Array.from({ length: rng.int(200) }, () => rng.int(256))) };
  if (kind === 1) return { route, body: Buffer.from(base.slice(0, rng.int(base.length))) };
  if (kind === 2) {
    const b = Buffer.from(base);
    for (let k = 0; k < 1 + rng.int(4); k++) b[rng.int(b.length)] = rng.int(256);
    return { route, body: b };
  }
  const obj = structuredClone(VALID[i]!) as Record<string, unknown>;
  const keys = [...Object.keys(obj), 'model', 'messages', 'prompt', 'max_tokens', 'stream', 'input_ids', 'text', 'sampling_params'];
  const key = keys[rng.int(keys.length)]!;
  obj[key] = WEIRD[rng.int(WEIRD.length)];
  if (kind === 4 && Array.isArray(obj.messages)) (obj.messages as unknown[]).push(WEIRD[rng.int(WEIRD.length)]);
  return { route, body: Buffer.from(JSON.stringify(obj)) };
}

describe('fuzz: 1,000 random and mutated bodies', () => {
  it('never crashes, answers 5xx only as 502/503/504 with the envelope, and leaks no in-flight count', async () => {
    const rng = new Rng(2026);
    const statuses = new Map<number, number>();
    for (let batch = 0; batch < 20; batch++) {
      const cases = Array.from({ length: 50 }, () => fuzzCase(rng));
      const results = await Promise.all(cases.map((c) => rawRequest(`${router.url}${c.route}`, { method: 'POST', body: c.body })));
      for (const r of results) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        expect(r.status).toBeGreaterThanOrEqual(200);
        if (r.status >= 500) {
          expect([502, 503, 504]).toContain(r.status);
          expect(r.headers['x-router-error-code']).toBeTruthy();
          expect(r.json()).toMatchObject({ error: { type: 'server_error' } });
        }
      }
    }
    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(1000);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    expect((await rawRequest(`${router.url}/healthz`)).status).toBe(200);
    expect(router.inflight).toBe(0);
    expect(router.state().workers.map((w) => w.inflight)).toEqual([0, 0]);
  });
});
