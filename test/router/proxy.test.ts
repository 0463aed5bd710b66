import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { request } from 'undici';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import { eventually, getJson, post, rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

let fleet: SimFleet;
let router: Router;
let client: OpenAI;
const model = 'sim-llama-3.1-8b';

beforeAll(async () => {
  fleet = await startSimFleet({ workers: 3, portBase: 0, speedup: 20, maxRunning: 64 });
  router = await startTestRouter(fleet.urls);
  client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await router.close();
  await fleet.close();
});

const engineRunning = async (): Promise<number> => {
  let total = 0;
  for (const u of fleet.urls) {
    const l = (await getJson(`${u}/v1/loads`)) as { loads: Array<{ num_running_reqs: number; num_waiting_reqs: number }> };
    total += l.loads.reduce((a, x) => a + x.num_running_reqs + x.num_waiting_reqs, 0);
  }
  return total;
};

describe('router data path with the official openai client', () => {
  it('streams a chat completion through the router', async () => {
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'through the router' }],
      max_tokens: 12,
      stream: true,
      stream_options: { include_usage: true },
    });
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      if (c.choices[0]?.delta?.content) chunks++;
      if (c.usage) usage = c.usage;
    }
    expect(chunks).toBe(12);
    expect(usage?.completion_tokens).toBe(12);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([model]);
  });

  it('200 concurrent streaming requests all complete with exactly max_tokens tokens', async () => {
    const one = async (i: number): Promise<number> => {
      const stream = await client.chat.completions.create({
        model,
        messages: [
          { role: 'system', content: 'Shared system prompt for the concurrency test. '.repeat(20) },
          { role: 'user', content: `request ${i}` },
        ],
        max_tokens: 24,
        stream: true,
        // @ts-expect-error SGLang/vLLM extension
        ignore_eos: true,
      });
      let n = 0;
      for await (const c of stream) if (c.choices[0]?.delta?.content) n++;
      return n;
    };
    const counts = await Promise.all(Array.from({ length: 200 }, (_, i) => one(i)));
    expect(counts.every((n) => n === 24)).toBe(true);
    expect(router.inflight).toBe(0);
    const s = router.state();
    expect(s.workers.reduce((a, w) => a + w.inflight, 0)).toBe(0);
  });

  it('a client aborting mid-stream frees the engine slot', async () => {
    const res = await request(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'long one' }], max_tokens: 5000, ignore_eos: true, stream: true }),
    });
    expect(res.statusCode).toBe(200);
    let seen = 0;
    for await (const chunk of res.body) {
      seen += (chunk as Buffer).toString().split('data: ').length - 1;
      if (seen >= 5) break; // leaving the loop destroys the body: the client hangs up
    }
    expect(await eventually(async () => (await engineRunning()) === 0)).toBe(true);
    expect(await eventually(async () => router.inflight === 0)).toBe(true);
  });

  it('/healthz, /readyz, /metrics and /admin/state answer', async () => {
    expect((await rawRequest(`${router.url}/healthz`)).status).toBe(200);
    expect((await rawRequest(`${router.url}/readyz`)).status).toBe(200);
    const metrics = (await rawRequest(`${router.url}/metrics`)).text;
    expect(metrics).toContain('sgl_router_cache_aware_decisions_total{model_id="sim-llama-3.1-8b",decision="cache_hit"}');
    expect(metrics).toContain('sgl_router_worker_inflight_requests{');
    const state = (await getJson(`${router.url}/admin/state`)) as { workers: unknown[]; router: { policy: string } };
    expect(state.workers).toHaveLength(3);
    expect(state.router.policy).toBe('cache_aware');
  });
});

describe('bad input gets the envelope and header, and never names a worker', () => {
  const noWorkerUrl = (text: string) => {
    for (const u of fleet.urls) expect(text).not.toContain(new URL(u).host);
  };

  it.each([
    ['malformed JSON', '{"messages": [', 400, 'bad_request'],
    ['not an object', '42', 400, 'bad_request'],
    ['missing messages', JSON.stringify({ model }), 400, 'bad_request'],
    ['unknown model', JSON.stringify({ model: 'gpt-17', messages: [{ role: 'user', content: 'x' }] }), 404, 'model_not_found'],
  ])('%s → %i %s', async (_n, body, status, code) => {
    const r = await post(`${router.url}/v1/chat/completions`, body);
    expect(r.status).toBe(status);
    expect(r.headers['x-router-error-code']).toBe(code);
    expect(r.json()).toEqual({ error: { type: 'invalid_request_error', code, message: expect.any(String) } });
    noWorkerUrl(r.text);
  });

  it('a 40 MB body → 413 before parsing, and the router keeps serving', async () => {
    const r = await rawRequest(`${router.url}/v1/chat/completions`, { method: 'POST', body: Buffer.alloc(40 * 1024 * 1024, 0x7b) });
    expect(r.status).toBe(413);
    expect(r.headers['x-router-error-code']).toBe('payload_too_large');
    expect((await rawRequest(`${router.url}/healthz`)).status).toBe(200);
  });

  it('an empty pool → 503 no_healthy_workers', async () => {
    const empty = await startTestRouter([], { modelId: model });
    try {
      const r = await post(`${empty.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'x' }] });
      expect(r.status).toBe(503);
      expect(r.headers['x-router-error-code']).toBe('no_healthy_workers');
      expect(r.json()).toMatchObject({ error: { type: 'server_error', code: 'no_healthy_workers' } });
      expect((await rawRequest(`${empty.url}/readyz`)).status).toBe(503);
    } finally {
      await empty.close();
    }
  });

  it('unknown routes 404 and wrong methods 405, with the envelope', async () => {
    const r = await rawRequest(`${router.url}/v2/nothing`);
    expect(r.status).toBe(404);
    expect(r.headers['x-router-error-code']).toBe('not_found');
    expect((await rawRequest(`${router.url}/v1/chat/completions`)).status).toBe(405);
  });
});
