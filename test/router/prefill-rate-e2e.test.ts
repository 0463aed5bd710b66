import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminState } from '../../src/contract/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * The router learns each engine's prefill rate from the streamed requests it relays
 * (docs/routing.md §Learned prefill rate), over real HTTP from simulated engines whose
 * rate is known: 1 / β1, with the tokenizing time per prompt token (α1) off so that the
 * rate per uncached token is β1's alone. What an operator reads: /admin/state, /metrics
 * and each decision record's predicted TTFT.
 */
const BETA1_MS = 0.2;
const TRUE_RATE = 1000 / BETA1_MS;

let fleet: SimFleet | undefined;
let router: Router | undefined;

describe('the learned prefill rate, over HTTP', () => {
  beforeAll(async () => {
    fleet = await startSimFleet({ workers: 2, portBase: 0, params: { beta1Ms: BETA1_MS, alpha1Ms: 0, maxRunning: 8 } });
    router = await startTestRouter(fleet.urls, { policy: 'round_robin' });
  });
  afterAll(async () => {
    await router?.close();
    await fleet?.close();
  });

  it('learns each engine within a tenth of its true rate from one streamed request at a time, and predicts their TTFT', async () => {
    const client = new OpenAI({ baseURL: `${router!.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    for (let n = 0; n < 48; n++) {
      // Prompts of 100 to 1,000 words, none sharing a first block with another.
      const words = 100 + ((n * 7) % 10) * 100;
      const content = `Request ${n}: ` + Array.from({ length: words }, (_, i) => `w${(i * 31 + n * 977) % 5000}`).join(' ');
      const stream = await client.chat.completions.create({
        model: 'sim-llama-3.1-8b',
        messages: [{ role: 'user', content }],
        max_tokens: 1,
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const _ of stream);
      // The engine's next load sample says nothing waits before the next is sent.
      await new Promise((r) => setTimeout(r, 60));
    }
    const state = JSON.parse((await rawRequest(`${router!.url}/admin/state`)).text) as AdminState;
    const metrics = (await rawRequest(`${router!.url}/metrics`)).text;
    for (const w of state.workers) {
      const p = w.prefill;
      expect(p.tokens_per_second, JSON.stringify(p)).not.toBeNull();
      expect(Math.abs(p.tokens_per_second! / TRUE_RATE - 1), JSON.stringify(p)).toBeLessThan(0.1);
      expect(p.pending_tokens).toBe(0);
      expect(metrics).toMatch(
        new RegExp(
          `^sgl_router_worker_prefill_tokens_per_second\\{worker="${w.url}"\\} ${p.tokens_per_second!.toFixed(0).slice(0, 2)}`,
          'm',
        ),
      );
    }
    const decisions = JSON.parse((await rawRequest(`${router!.url}/admin/decisions`)).text) as {
      decisions: Array<{ predicted_ttft_ms: number | null; ttft_ms: number | null }>;
    };
    const last = decisions.decisions.at(-1)!;
    expect(last.predicted_ttft_ms).not.toBeNull();
    expect(Math.abs(last.predicted_ttft_ms! / last.ttft_ms! - 1), JSON.stringify(last)).toBeLessThan(0.2);
  });
});
