import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AHEAD_MIN_SAMPLES } from '../../src/router/policies/prefill-rate/index.js';
import { LLM_D_SIM_TOKENIZER } from '../../src/tokenizer/index.js';
import type { RunningCli } from '../helpers/cli.js';
import { eventually } from '../helpers/http.js';
import { startLlmdSim } from '../helpers/llm-d-sim.js';
import type { LlmdSim } from '../helpers/llm-d-sim.js';
import { startCli } from '../helpers/cli.js';
import { adminState, decisionOf } from '../helpers/peer-router.js';
import { describeWithPeers } from '../helpers/peers.js';

/**
 * The learned prefill rate against engines we did not write: two llm-d-inference-sim
 * engines, one prefilling twice as fast as the other (docs/routing.md §Learned prefill rate). The router learns each from the TTFTs of the requests it routes; the client
 * times the same requests itself, and the engine's own configuration says the truth.
 */
// Slow enough that a prompt's prefill (0.05 to 1 s) stands well above what a busy CI machine
// adds to a client's timing (20 ms measured beside a vLLM test).
const SPEEDS = [
  { perTokenMs: 1, tokensPerSecond: 1_000 },
  { perTokenMs: 2, tokensPerSecond: 500 },
];

let sims: LlmdSim[] = [];
let cli: RunningCli | undefined;
let url = '';

/** A prompt of about `words` tokens that no other request shares, from its first token. */
const prompt = (n: number, words: number): string =>
  `Request ${n} begins here. ` + Array.from({ length: words }, (_, i) => `w${(i * 7919 + n * 104729) % 9973}`).join(' ');

interface Timed {
  worker: string;
  tokens: number;
  ttftMs: number;
  /** What the router predicted, in its decision record; null while the worker's estimate was cold. */
  predictedMs: number | null;
}

/** One streamed chat through the router, timed to its first chunk by the client. */
async function timed(client: OpenAI, n: number, words: number): Promise<Timed> {
  const id = `pr-${n}`;
  const started = performance.now();
  const stream = await client.chat.completions.create(
    {
      model: 'tiny',
      messages: [{ role: 'user', content: prompt(n, words) }],
      max_tokens: 2,
      stream: true,
      stream_options: { include_usage: true },
    },
    { headers: { 'x-request-id': id } },
  );
  let ttftMs = NaN;
  let tokens = 0;
  for await (const chunk of stream) {
    if (Number.isNaN(ttftMs)) ttftMs = performance.now() - started;
    if (chunk.usage) tokens = chunk.usage.prompt_tokens;
  }
  const rec = await decisionOf(url, id);
  return { worker: rec.worker, tokens, ttftMs, predictedMs: rec.predicted_ttft_ms };
}

/** Least squares: the rate (tokens/s) and base (ms) of ttft = base + tokens / rate. */
function leastSquares(pts: readonly Timed[]): { tokensPerSecond: number; baseMs: number } {
  const n = pts.length;
  const mx = pts.reduce((s, p) => s + p.tokens, 0) / n;
  const my = pts.reduce((s, p) => s + p.ttftMs, 0) / n;
  const sxy = pts.reduce((s, p) => s + (p.tokens - mx) * (p.ttftMs - my), 0);
  const sxx = pts.reduce((s, p) => s + (p.tokens - mx) ** 2, 0);
  const slope = sxy / sxx;
  return { tokensPerSecond: 1000 / slope, baseMs: my - slope * mx };
}

describeWithPeers(['llm-d-inference-sim'], 'the learned prefill rate against llm-d-inference-sim', () => {
  beforeAll(async () => {
    sims = await Promise.all(SPEEDS.map((s) => startLlmdSim({ prefillOverheadMs: 5, prefillTimePerTokenMs: s.perTokenMs, maxNumSeqs: 8 })));
    // Round robin: each engine serves every other request.
    cli = startCli([
      ...['serve', '--no-tui', '--port', '0', '--worker-urls', ...sims.map((s) => s.url), '--policy', 'round_robin'],
      ...['--tokenizer', LLM_D_SIM_TOKENIZER, '--load-poll-interval-ms', '100'],
    ]);
    [url] = (await cli.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m, 30_000)) as [string];
    await eventually(async () => (await adminState(url)).workers.every((w) => w.fresh), 10_000, 50);
  }, 60_000);
  afterAll(async () => {
    cli?.child.kill('SIGKILL');
    await Promise.all(sims.map((s) => s.close()));
  });

  it("learns each engine's rate within a fifth of its configured one and of the client's own fit, and predicts the TTFT the client measures for requests sent four at a time within a fifth", async () => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
    // One at a time, prompts of 100 to 950 tokens: every engine quiet when its request is sent.
    const learnt: Timed[] = [];
    for (let n = 0; n < 64; n++) {
      learnt.push(await timed(client, n, 40 + ((n * 37) % 20) * 22));
      // Its load sample, 100 ms apart, says nothing waits before the next is sent.
      await new Promise((r) => setTimeout(r, 120));
    }
    const workers = (await adminState(url)).workers;
    const report: string[] = [];
    sims.forEach((sim, i) => {
      const mine = learnt.filter((t) => t.worker === sim.url);
      const measured = leastSquares(mine);
      const p = workers.find((w) => w.url === sim.url)!.prefill;
      report.push(
        `${sim.url}: learnt ${p.tokens_per_second} tok/s base ${p.base_ms} ms; client ${measured.tokensPerSecond.toFixed(0)} tok/s base ${measured.baseMs.toFixed(1)} ms; configured ${SPEEDS[i]!.tokensPerSecond}`,
      );
      expect(p.tokens_per_second, report.at(-1)).not.toBeNull();
      expect(Math.abs(p.tokens_per_second! / SPEEDS[i]!.tokensPerSecond - 1), report.at(-1)).toBeLessThan(0.2);
      expect(Math.abs(p.tokens_per_second! / measured.tokensPerSecond - 1), report.at(-1)).toBeLessThan(0.2);
      expect(p.pending_tokens).toBe(0);
    });
    // Until AHEAD_MIN_SAMPLES requests were sent behind pending prefill, the router takes a
    // pending token to weigh what the engine's own do (SGLang and vLLM batch prefills); this
    // engine times each request alone, which eight rounds of four at a time teach it.
    for (let round = 0; round < AHEAD_MIN_SAMPLES; round++)
      await Promise.all([0, 1, 2, 3].map((k) => timed(client, 500 + round * 4 + k, 200 + k * 80)));
    // Under load: four at a time (under each engine's 8 running), held out from the fit.
    const held: Timed[] = [];
    for (let round = 0; round < 4; round++)
      held.push(...(await Promise.all([0, 1, 2, 3].map((k) => timed(client, 1000 + round * 4 + k, 200 + k * 80)))));
    // The router's prediction, in each decision record, against the client's own clock.
    for (const t of held)
      expect(
        Math.abs(t.predictedMs! / t.ttftMs - 1),
        `${t.worker}: ${t.tokens} tokens, predicted ${t.predictedMs} ms, measured ${t.ttftMs.toFixed(1)} ms; ${report.join('; ')}`,
      ).toBeLessThan(0.2);
    console.log(report.join('\n'));
  }, 120_000);
});
