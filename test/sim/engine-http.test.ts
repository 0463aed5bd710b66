import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';
import { eventually, getJson, post, put, rawRequest } from '../helpers/http.js';

let fleet: SimFleet;
let url: string;
let client: OpenAI;

beforeAll(async () => {
  fleet = await startSimFleet({ workers: 2, portBase: 0, maxRunning: 4, speedup: 1 });
  url = fleet.urls[0]!;
  client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
afterAll(() => fleet.close());

const model = 'sim-llama-3.1-8b';

async function queueDepths(u: string) {
  const loads = (await getJson(`${u}/v1/loads`)) as { loads: Array<{ num_waiting_reqs: number; num_running_reqs: number }> };
  const metrics = parsePrometheusText((await rawRequest(`${u}/metrics`)).text);
  return {
    waiting: loads.loads.reduce((a, l) => a + l.num_waiting_reqs, 0),
    running: loads.loads.reduce((a, l) => a + l.num_running_reqs, 0),
    queueMetric: sumSamples(metrics.get('sglang:num_queue_reqs')),
  };
}

describe('simulated engine over HTTP with the official openai client', () => {
  it('answers a non-streaming chat completion with usage and cached tokens', async () => {
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 5 });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(r.usage!.completion_tokens).toBe(5);
    expect(r.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
  });

  it('streams tokens incrementally and ends with a usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Stream please' }],
      max_tokens: 20,
      stream: true,
      stream_options: { include_usage: true },
    });
    const arrivals: number[] = [];
    let content = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta?.content;
      if (delta) {
        arrivals.push(performance.now());
        content += delta;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(arrivals).toHaveLength(20);
    // ~6 ms per decode step: twenty tokens cannot all arrive in one burst.
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(30);
    expect(content.split(' ').filter(Boolean)).toHaveLength(20);
    expect(usage?.completion_tokens).toBe(20);
    expect(usage?.prompt_tokens_details?.cached_tokens).toBeDefined();
  });

  it('serves legacy completions and native /generate (cumulative streaming)', async () => {
    const c = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 3 });
    expect(c.choices[0]!.text.length).toBeGreaterThan(0);
    const g = await post(`${url}/generate`, { input_ids: [1, 2, 3, 4, 5], sampling_params: { max_new_tokens: 4, ignore_eos: true } });
    const body = g.json() as { text: string; output_ids: number[]; meta_info: { finish_reason: { type: string }; prompt_tokens: number } };
    expect(body.output_ids).toHaveLength(4);
    expect(body.meta_info.finish_reason.type).toBe('length');
    expect(body.meta_info.prompt_tokens).toBe(5);
    const s = await post(`${url}/generate`, { text: 'stream me', stream: true, sampling_params: { max_new_tokens: 3, ignore_eos: true } });
    const events = s.text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const texts = events.slice(0, -1).map((e) => (JSON.parse(e) as { text: string }).text);
    for (let i = 1; i < texts.length; i++) expect(texts[i]!.startsWith(texts[i - 1]!)).toBe(true);
  });

  it('reports a queue when twice max-running long requests are in flight, then zero', async () => {
    const u = fleet.urls[1]!;
    const c = new OpenAI({ baseURL: `${u}/v1`, apiKey: 'unused', maxRetries: 0 });
    const inflight = Array.from({ length: 8 }, (_, i) =>
      c.chat.completions.create({
        model,
        messages: [{ role: 'user', content: `long job ${i}` }],
        max_tokens: 60,
        ignore_eos: true,
      } as never),
    );
    // The two surfaces are read a moment apart while the queue moves: wait for a reading where both show it.
    const busy = await eventually(async () => {
      const d = await queueDepths(u);
      return d.waiting > 0 && d.queueMetric === d.waiting && d;
    });
    expect(busy.waiting).toBeGreaterThan(0);
    await Promise.all(inflight);
    const idle = await queueDepths(u);
    expect(idle).toEqual({ waiting: 0, running: 0, queueMetric: 0 });
  });

  it('answers every load surface: /get_load array, /server_info', async () => {
    const gl = (await getJson(`${url}/get_load`)) as Array<Record<string, number>>;
    expect(Object.keys(gl[0]!)).toEqual(['dp_rank', 'num_reqs', 'num_waiting_reqs', 'num_tokens', 'num_pending_tokens', 'ts_tic']);
    const info = (await getJson(`${url}/server_info`)) as { dp_size: number; page_size: number };
    expect(info.dp_size).toBe(1);
    expect(info.page_size).toBe(16);
    expect(await getJson(`${url}/get_server_info`)).toMatchObject({ dp_size: 1 });
    expect((await rawRequest(`${url}/health`)).status).toBe(200);
    expect((await rawRequest(`${url}/health_generate`)).status).toBe(200);
    expect((await rawRequest(`${url}/flush_cache`, { method: 'POST' })).status).toBe(200);
  });
});

describe('test controls', () => {
  it('PUT /sim/load pins the waiting count in /v1/loads, /get_load and /metrics; null releases it', async () => {
    expect((await put(`${url}/sim/load`, { num_waiting_reqs: 9 })).status).toBe(200);
    const v1 = (await getJson(`${url}/v1/loads`)) as { loads: Array<{ num_waiting_reqs: number }> };
    const gl = (await getJson(`${url}/get_load`)) as Array<{ num_waiting_reqs: number }>;
    const m = parsePrometheusText((await rawRequest(`${url}/metrics`)).text);
    expect(v1.loads[0]!.num_waiting_reqs).toBe(9);
    expect(gl[0]!.num_waiting_reqs).toBe(9);
    expect(sumSamples(m.get('sglang:num_queue_reqs'))).toBe(9);
    // Behaviour is unchanged: a request still runs at once.
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
    expect(r.choices).toHaveLength(1);
    await put(`${url}/sim/load`, { num_waiting_reqs: null });
    expect(((await getJson(`${url}/get_load`)) as Array<{ num_waiting_reqs: number }>)[0]!.num_waiting_reqs).toBe(0);
  });

  it('load_reporting false: load endpoints 404 and load gauges leave /metrics', async () => {
    await put(`${url}/sim/config`, { load_reporting: false });
    try {
      expect((await rawRequest(`${url}/v1/loads`)).status).toBe(404);
      expect((await rawRequest(`${url}/get_load`)).status).toBe(404);
      const m = parsePrometheusText((await rawRequest(`${url}/metrics`)).text);
      expect(m.has('sglang:num_queue_reqs')).toBe(false);
      expect(m.has('sglang:prompt_tokens_total')).toBe(true);
    } finally {
      await put(`${url}/sim/config`, { load_reporting: true });
    }
    expect((await rawRequest(`${url}/v1/loads`)).status).toBe(200);
  });

  it('failure_rate 1 fails every generation with a 5xx in the engine shape, and the engine stays up', async () => {
    await put(`${url}/sim/config`, { failure_rate: 1 });
    try {
      for (let i = 0; i < 5; i++) {
        const r = await post(`${url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
        expect(r.status).toBeGreaterThanOrEqual(500);
        expect(r.json()).toMatchObject({ object: 'error', code: r.status });
      }
      expect((await rawRequest(`${url}/health`)).status).toBe(200);
    } finally {
      await put(`${url}/sim/config`, { failure_rate: 0 });
    }
    const ok = await post(`${url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
    expect(ok.status).toBe(200);
  });

  it('rejects malformed control bodies', async () => {
    expect((await put(`${url}/sim/config`, { failure_rate: 2 })).status).toBe(400);
    expect((await put(`${url}/sim/config`, { nope: true })).status).toBe(400);
    expect((await put(`${url}/sim/load`, { num_waiting_reqs: -1 })).status).toBe(400);
  });
});

describe('bad input gets a 4xx in the engine shape, never a crash', () => {
  const chat = (body: unknown) => post(`${url}/v1/chat/completions`, body);
  it.each([
    ['malformed JSON', '{"messages": [', 400],
    ['a JSON array', '[1,2]', 400],
    ['missing messages', { model }, 400],
    ['empty messages', { messages: [] }, 400],
    ['unknown model', { model: 'gpt-17', messages: [{ role: 'user', content: 'x' }] }, 404],
    ['negative max_tokens', { messages: [{ role: 'user', content: 'x' }], max_tokens: -5 }, 400],
    ['non-integer max_tokens', { messages: [{ role: 'user', content: 'x' }], max_tokens: 'many' }, 400],
  ] as const)('%s → %i', async (_name, body, status) => {
    const r = await chat(body);
    expect(r.status).toBe(status);
    expect(r.json()).toMatchObject({ object: 'error', code: status });
  });

  it('missing prompt on /v1/completions and on /generate', async () => {
    expect((await post(`${url}/v1/completions`, { model })).status).toBe(400);
    const g = await post(`${url}/generate`, { sampling_params: {} });
    expect(g.status).toBe(400);
    expect(g.json()).toEqual({ error: { message: expect.any(String) } });
  });

  it('a 40 MB body → 413, and the engine still serves', async () => {
    const big = Buffer.alloc(40 * 1024 * 1024, 0x61);
    const r = await rawRequest(`${url}/v1/chat/completions`, { method: 'POST', body: big });
    expect(r.status).toBe(413);
    expect((await rawRequest(`${url}/health`)).status).toBe(200);
  });

  it('unknown route 404, wrong method 405', async () => {
    expect((await rawRequest(`${url}/nope`)).status).toBe(404);
    expect((await rawRequest(`${url}/v1/chat/completions`)).status).toBe(405);
  });
});

describe('data parallelism and the vLLM flavour', () => {
  it('--dp-size 2 reports two ranks whose counts add up to the engine total', async () => {
    const f = await startSimFleet({ workers: 1, portBase: 0, dpSize: 2, maxRunning: 2, speedup: 1 });
    try {
      const u = f.urls[0]!;
      const reqs = Array.from({ length: 7 }, (_, i) =>
        post(`${u}/v1/chat/completions`, { messages: [{ role: 'user', content: `dp ${i}` }], max_tokens: 40, ignore_eos: true }),
      );
      const snapshot = await eventually(async () => {
        const l = (await getJson(`${u}/v1/loads`)) as {
          loads: Array<{ dp_rank: number; num_running_reqs: number; num_waiting_reqs: number }>;
        };
        const total = l.loads.reduce((a, x) => a + x.num_running_reqs + x.num_waiting_reqs, 0);
        // Arrival overhead first holds requests in the queue; wait until both ranks run.
        return total === 7 && l.loads.every((x) => x.num_running_reqs === 2) && l;
      });
      expect(snapshot.loads.map((x) => x.dp_rank)).toEqual([0, 1]);
      expect(snapshot.loads.every((x) => x.num_running_reqs === 2)).toBe(true);
      const m = parsePrometheusText((await rawRequest(`${u}/metrics`)).text);
      const ranks = m.get('sglang:num_running_reqs')!.samples.map((s) => s.labels.dp_rank);
      expect(ranks).toEqual(['0', '1']);
      await Promise.all(reqs);
    } finally {
      await f.close();
    }
  });

  it('vLLM flavour: vllm: metrics, /load, /ping, nested error shape, no SGLang-only routes', async () => {
    const f = await startSimFleet({ workers: 1, portBase: 0, flavor: 'vllm', speedup: 10 });
    try {
      const u = f.urls[0]!;
      await put(`${u}/sim/load`, { num_waiting_reqs: 3 });
      const m = parsePrometheusText((await rawRequest(`${u}/metrics`)).text);
      expect(sumSamples(m.get('vllm:num_requests_waiting'))).toBe(3);
      expect(m.get('vllm:num_requests_waiting')!.samples[0]!.labels).toEqual({ model_name: model, engine: '0' });
      expect(m.has('vllm:prefix_cache_hits_total')).toBe(true);
      expect(m.has('vllm:kv_cache_usage_perc')).toBe(true);
      expect(await getJson(`${u}/load`)).toEqual({ server_load: 0 });
      expect((await rawRequest(`${u}/ping`)).status).toBe(200);
      expect((await rawRequest(`${u}/v1/loads`)).status).toBe(404);
      const models = (await getJson(`${u}/v1/models`)) as { data: Array<{ owned_by: string }> };
      expect(models.data[0]!.owned_by).toBe('vllm');
      const bad = await post(`${u}/v1/chat/completions`, '{oops');
      expect(bad.status).toBe(400);
      expect(bad.json()).toMatchObject({ error: { type: 'BadRequestError', code: 400 } });
      await put(`${u}/sim/config`, { load_reporting: false });
      expect((await rawRequest(`${u}/load`)).status).toBe(404);
    } finally {
      await f.close();
    }
  });

  it("vLLM flavour: --max-num-queued-reqs counts running and waiting, and refuses with vLLM's 503 (as vLLM 0.32 answers)", async () => {
    const f = await startSimFleet({ workers: 1, portBase: 0, flavor: 'vllm', speedup: 1, maxRunning: 1, params: { maxNumQueuedReqs: 2 } });
    try {
      const u = f.urls[0]!;
      const long = (): Promise<unknown> =>
        post(`${u}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'x' }], max_tokens: 2000, ignore_eos: true });
      const held = [long(), long()];
      void Promise.allSettled(held);
      await eventually(async () => {
        const m = parsePrometheusText((await rawRequest(`${u}/metrics`)).text);
        return sumSamples(m.get('vllm:num_requests_running')) + sumSamples(m.get('vllm:num_requests_waiting')) === 2;
      });
      for (const stream of [false, true]) {
        const refused = await post(`${u}/v1/chat/completions`, {
          model,
          messages: [{ role: 'user', content: 'y' }],
          max_tokens: 1,
          stream,
        });
        expect(refused.status).toBe(503);
        expect(refused.json()).toEqual({
          error: {
            message: 'The engine is currently busy and cannot accept new requests. Please try again later or on a different instance.',
            type: 'Service Unavailable',
            param: null,
            code: 503,
          },
        });
      }
      const m = parsePrometheusText((await rawRequest(`${u}/metrics`)).text);
      const rejections = m.get('vllm:admission_rejections_total')!.samples;
      expect(rejections.map((x) => [x.labels, x.value])).toEqual([
        [{ model_name: model, reason: 'max_num_queued_reqs' }, 2],
        [{ model_name: model, reason: 'max_num_queued_tokens' }, 0],
      ]);
    } finally {
      await f.close();
    }
  }, 20_000);
});
