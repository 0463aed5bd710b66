import OpenAI, { APIError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdminDecisions } from '../../src/contract/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';
import { rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * The TTFT goal over real HTTP (docs/routing.md §SLO gate, §SLO admission): simulated
 * engines of a known prefill rate (1 / β1 = 2,000 tokens/s, α1 off), prompts as token
 * ids so that each request's uncached tokens are exact, the official client. Every
 * margin is hundreds of ms, so neither outcome can come from a near tie.
 */
const BETA1_MS = 0.5;
const MODEL = 'sim-llama-3.1-8b';

let fleet: SimFleet | undefined;
let router: Router | undefined;

afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = undefined;
  fleet = undefined;
});

/** `n` token ids no other prompt of the test shares, from `seed`. */
const tokens = (seed: number, n: number): number[] => Array.from({ length: n }, (_, i) => 1000 + ((seed * 7919 + i * 31) % 20000));

async function start(workers: number, overrides: Partial<RouterConfig>): Promise<{ client: OpenAI; url: string }> {
  fleet = await startSimFleet({ workers, portBase: 0, params: { beta1Ms: BETA1_MS, alpha1Ms: 0, maxRunning: 16 } });
  router = await startTestRouter(fleet.urls, { decisionHeader: 'urls', ...overrides });
  return { client: new OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'unused', maxRetries: 0 }), url: router.url };
}

/** One streamed completion of `prompt`; its response headers and its time to first byte. */
async function complete(
  client: OpenAI,
  prompt: number[],
  headers: Record<string, string> = {},
): Promise<{ headers: Headers; ttftMs: number }> {
  const t0 = performance.now();
  const { data: stream, response } = await client.completions
    .create({ model: MODEL, prompt, max_tokens: 2, stream: true }, { headers })
    .withResponse();
  let ttftMs = -1;
  for await (const _ of stream) if (ttftMs < 0) ttftMs = performance.now() - t0;
  return { headers: response.headers, ttftMs };
}

/**
 * Teach every engine its rate: pairs of prompts of 200 to 2,000 tokens at once, so that
 * the pair fallback gives each engine one (the other is busy) and each is sent with
 * nothing waiting on it.
 */
async function warm(client: OpenAI, workers: number, rounds = 16): Promise<void> {
  // Priority 1: admission must not shed what teaches it.
  const must = { 'x-routerctl-priority': '1' };
  for (let n = 0; n < rounds; n++)
    await Promise.all(
      Array.from({ length: workers }, (_, k) => complete(client, tokens(100 + n * workers + k, 200 + ((n * 7 + k * 3) % 10) * 200), must)),
    );
}

async function decisions(url: string): Promise<AdminDecisions> {
  return JSON.parse((await rawRequest(`${url}/admin/decisions`)).text) as AdminDecisions;
}

describe('--queue-gate slo over HTTP', () => {
  it('leaves an owner predicted to miss the goal for a worker predicted to meet it, as cache_worker_queued, and explain says why', async () => {
    const { client, url } = await start(2, { queueGate: 'slo', ttftSloMs: 1200 });
    await warm(client, 2);
    const state = JSON.parse((await rawRequest(`${url}/admin/state`)).text) as {
      workers: Array<{ url: string; prefill: { tokens_per_second: number | null } }>;
    };
    for (const w of state.workers) expect(w.prefill.tokens_per_second, w.url).not.toBeNull();
    const [a, b] = fleet!.urls as [string, string];

    // P, 1,600 tokens (a match counts from 1,024), goes to the first worker (both idle: the pair keeps pool order) and is its prefix from then on.
    const prefix = tokens(1, 1600);
    const first = await complete(client, [...prefix, ...tokens(2, 50)]);
    expect(first.headers.get('x-router-decision')).toMatch(new RegExp(`; worker=${a};`));
    // The control: nothing ahead, the owner is predicted well within the goal and keeps its prefix.
    const control = await complete(client, [...prefix, ...tokens(3, 100)]);
    expect(control.headers.get('x-router-decision')).toMatch(new RegExp(`^cache_hit; worker=${a};`));

    // 3,000 uncached tokens nobody holds go to the owner (both idle again): 1.5 s of prefill ahead of anything sent it next.
    const heavy = complete(client, tokens(4, 3000));
    await new Promise((r) => setTimeout(r, 30));
    // The owner: 1.5 s ahead + 0.05 s of its own > 1.2 s; the other worker: 1,700 tokens from scratch, 0.86 s.
    const diverted = await complete(client, [...prefix, ...tokens(5, 100)]);
    await heavy;
    expect(diverted.headers.get('x-router-decision')).toMatch(new RegExp(`^cache_worker_queued; worker=${b};`));
    const id = diverted.headers.get('x-request-id')!;
    const record = (await decisions(url)).decisions.find((d) => d.request_id === id)!;
    expect(record.gate_rule).toBe("predicted TTFT > 1,200 ms while another engine's is not");
    const owner = record.candidates.find((c) => c.worker === a)!;
    expect(owner.gate).toBe('gated');
    expect(owner.predicted_ttft_ms!).toBeGreaterThan(1400);
    expect(record.predicted_ttft_ms!).toBeLessThan(1000);
    // What the client saw bears the prediction out: the diverted request was not held behind the heavy one.
    expect(diverted.ttftMs).toBeLessThan(1200);

    const explain = await runCli(['explain', '--url', url, '--request', id]);
    expect(explain.code, explain.stderr).toBe(0);
    expect(explain.stdout).toMatch(/held \d+\/\d+ blocks: gated \(predicted 1\.\d s > goal 1\.2 s\)/);
    expect(explain.stdout).toMatch(
      /every owner was predicted to miss the 1\.2 s goal and this worker was not, predicted \d+ ms \(cache_worker_queued\)/,
    );
  }, 60_000);
});

describe('--admission slo over HTTP', () => {
  it('holds, then sheds with 429 and Retry-After what no engine can start in time; never a request that must not be shed', async () => {
    const { client, url } = await start(1, { admission: 'slo', ttftSloMs: 600 });
    await warm(client, 1, 24);
    const before = (await decisions(url)).recorded_total;

    // 3,000 tokens that must not be shed: 1.5 s of prefill ahead of whatever comes next.
    const heavy = complete(client, tokens(10, 3000), { 'x-routerctl-priority': '1' });
    await new Promise((r) => setTimeout(r, 30));
    // A short prompt could start in time once what is ahead has begun: held, and shed when it no longer could.
    const held = complete(client, tokens(11, 60)).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    const metricsWhileHeld = (await rawRequest(`${url}/metrics`)).text;

    expect(metricsWhileHeld).toMatch(/^sgl_router_held_requests 1$/m);
    // 2,000 tokens take 1 s with nothing ahead: shed at once.
    const long = await complete(client, tokens(12, 2000)).catch((e: unknown) => e);
    // The same short prompt that must not be shed goes straight to the engine.
    const kept = await complete(client, tokens(13, 60), { 'x-routerctl-priority': '1' });
    expect(kept.ttftMs).toBeGreaterThan(600);

    for (const refused of [await held, long]) {
      expect(refused).toBeInstanceOf(APIError);
      const e = refused as APIError;
      expect(e.status).toBe(429);
      expect(e.headers?.['x-router-error-code'] ?? (e.headers as unknown as Headers).get?.('x-router-error-code')).toBe('request_shed');
      expect(Number((e.headers as unknown as Headers).get?.('retry-after') ?? e.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(e.message).toMatch(/no worker is predicted to start this request within the 600 ms TTFT goal/);
    }
    await heavy;
    const metrics = (await rawRequest(`${url}/metrics`)).text;
    expect(metrics).toMatch(/^sgl_router_shed_requests_total\{reason="slo"\} 2$/m);
    expect(metrics).toMatch(/^sgl_router_held_requests 0$/m);
    // Shed requests were never routed: only the heavy and the kept one were recorded.
    expect((await decisions(url)).recorded_total - before).toBe(2);

    // With nothing ahead again, a short prompt is admitted.
    const after = await complete(client, tokens(14, 60));
    expect(after.ttftMs).toBeLessThan(600);
  }, 60_000);
});

describe('lateness over HTTP', () => {
  it("a non-streamed response's first byte, which comes at its end, is not taken for lateness", async () => {
    const { client, url } = await start(1, {});
    await warm(client, 1, 16);
    // Four answers of 64 tokens, not streamed: their first byte is their last, a generation later.
    for (let n = 0; n < 4; n++)
      await client.completions.create({ model: MODEL, prompt: tokens(300 + n, 400), max_tokens: 64, ignore_eos: true } as never);
    const probe = await complete(client, tokens(400, 400));
    const id = probe.headers.get('x-request-id')!;
    const record = (await decisions(url)).decisions.find((d) => d.request_id === id)!;
    const nonStreamed = (await decisions(url)).decisions.filter((d) => d.input_tokens === 400 && d.ttft_ms !== null && d.request_id !== id);
    // The line alone: about 8 ms + 400 × 0.5 ms. Taken for lateness, each generation would have added its whole length.
    const generation = Math.min(...nonStreamed.map((d) => d.ttft_ms!));
    expect(record.predicted_ttft_ms!, JSON.stringify({ record, generation })).toBeLessThan(Math.max(400, generation / 2));
    expect(Math.abs(record.predicted_ttft_ms! / probe.ttftMs - 1)).toBeLessThan(0.5);
  }, 60_000);
});
