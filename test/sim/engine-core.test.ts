import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sim/clock.js';
import { EngineCore } from '../../src/sim/engine-core.js';
import { DEFAULT_ENGINE_PARAMS } from '../../src/sim/engine-params.js';
import type { EngineParams } from '../../src/sim/engine-params.js';
import type { SimRequest } from '../../src/sim/sim-request.js';
import { renderChat, tokenize } from '../../src/prefix/index.js';

function setup(overrides: Partial<EngineParams> = {}) {
  const clock = new ManualClock();
  const core = new EngineCore({ ...DEFAULT_ENGINE_PARAMS, ...overrides }, clock, 1);
  const done: SimRequest[] = [];
  const tokens = new Map<SimRequest, number[]>();
  const submit = (prompt: number[], maxTokens = 16, ignoreEos = true) => {
    const seen: number[] = [];
    const res = core.submit(
      { promptTokens: prompt, maxTokens, ignoreEos },
      {
        onToken: (_p, _i, at) => seen.push(at),
        onFinish: (r) => done.push(r),
      },
    );
    if (!res.ok) throw new Error(res.reason);
    tokens.set(res.request, seen);
    return res.request;
  };
  return { clock, core, done, submit, tokens };
}

const longPrompt = (seed: string, approxTokens: number): number[] => {
  let text = '';
  let i = 0;
  while (tokenize(text).length < approxTokens) text += `${seed} sentence number ${i++} about caching and queues. `;
  return tokenize(text).slice(0, approxTokens);
};

describe('EngineCore under a manual clock', () => {
  it('a repeated ~2,000-token prompt is ≥90% cached and its TTFT ≥3x lower (simulated time)', () => {
    const { clock, submit } = setup();
    const prompt = longPrompt('alpha', 2000);
    const first = submit(prompt, 4);
    clock.runUntilIdle();
    const second = submit(prompt, 4);
    clock.runUntilIdle();
    expect(first.cachedTokens).toBe(0);
    expect(second.cachedTokens / prompt.length).toBeGreaterThanOrEqual(0.9);
    expect(first.ttftMs / second.ttftMs).toBeGreaterThanOrEqual(3);
    // The BLIS worked example: ~44 ms cold, ~10 ms warm.
    expect(first.ttftMs).toBeGreaterThan(40);
    expect(first.ttftMs).toBeLessThan(50);
  });

  it('queues beyond the running cap, FIFO, and drains to zero', () => {
    const { clock, core, submit, done } = setup({ maxRunning: 4 });
    const reqs = Array.from({ length: 8 }, (_, i) => submit(longPrompt(`p${i}`, 100), 20));
    clock.advance(1);
    expect(core.runningCount).toBe(4);
    expect(core.waitingCount).toBe(4);
    expect(core.load().waiting).toBe(4);
    clock.runUntilIdle();
    expect(core.runningCount).toBe(0);
    expect(core.waitingCount).toBe(0);
    expect(done.map((r) => r.id)).toEqual(reqs.map((r) => r.id));
    // The second wave was admitted only after the first finished.
    expect(reqs[4]!.admittedAt).toBeGreaterThanOrEqual(reqs[0]!.finishedAt);
    expect(core.cache.usedBlocks()).toBe(0);
  });

  it('generates exactly max_tokens with ignore_eos, tokens one step apart', () => {
    const { clock, submit, tokens } = setup();
    const r = submit(longPrompt('x', 50), 10);
    clock.runUntilIdle();
    expect(r.completionTokens).toBe(10);
    expect(r.finishReason).toBe('length');
    const at = tokens.get(r)!;
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeCloseTo(5.7527 + 0.006, 3);
  });

  it('samples output length from the seed when EOS is honoured', () => {
    const lengths = (seed: number) => {
      const clock = new ManualClock();
      const core = new EngineCore(DEFAULT_ENGINE_PARAMS, clock, seed);
      const out: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = core.submit(
          { promptTokens: [1, 2, 3], maxTokens: 1000, ignoreEos: false },
          { onToken() {}, onFinish: (q) => out.push(q.completionTokens) },
        );
        expect(r.ok).toBe(true);
      }
      clock.runUntilIdle();
      return out;
    };
    expect(lengths(7)).toEqual(lengths(7));
    expect(lengths(7)).not.toEqual(lengths(8));
  });

  it('chunks a long prefill across steps under the token budget', () => {
    const { clock, submit } = setup({ chunkedPrefillSize: 512 });
    const r = submit(longPrompt('chunk', 2000), 1);
    clock.runUntilIdle();
    // ceil(2000 / 512) = 4 prefill steps
    const p = DEFAULT_ENGINE_PARAMS;
    const overhead = p.alpha0Ms + p.alpha1Ms * 2000;
    expect(r.ttftMs).toBeCloseTo(overhead + 4 * p.beta0Ms + 2000 * p.beta1Ms, 6);
  });

  it('caches generated blocks, so the next turn of a conversation hits them', () => {
    const { clock, core } = setup();
    const system = 'You are a support bot for a GPU cluster. '.repeat(30);
    const history = [
      { role: 'system', content: system },
      { role: 'user', content: 'first question' },
    ];
    let reply = '';
    const r1 = core.submit(
      { promptTokens: tokenize(renderChat(history)), maxTokens: 64, ignoreEos: true },
      {
        onToken: (p) => (reply += p),
        onFinish() {},
      },
    );
    clock.runUntilIdle();
    expect(r1.ok).toBe(true);
    const turn2 = renderChat([...history, { role: 'assistant', content: reply }, { role: 'user', content: 'second' }]);
    const r2 = core.submit({ promptTokens: tokenize(turn2), maxTokens: 4, ignoreEos: true }, { onToken() {}, onFinish() {} });
    clock.runUntilIdle();
    if (!r1.ok || !r2.ok) throw new Error('refused');
    // Everything up to the end of the first reply is reusable, not just the first prompt.
    expect(r2.request.cachedTokens).toBeGreaterThan(r1.request.promptTokens);
  });

  it('abort frees the slot and the KV memory at once', () => {
    const { clock, core, submit } = setup({ maxRunning: 1 });
    const a = submit(longPrompt('a', 300), 500);
    const b = submit(longPrompt('b', 300), 5);
    clock.advance(50);
    expect(core.runningCount).toBe(1);
    expect(core.waitingCount).toBe(1);
    core.abort(a);
    expect(a.state).toBe('aborted');
    clock.runUntilIdle();
    expect(b.state).toBe('finished');
    expect(core.cache.usedBlocks()).toBe(0);
    expect(core.counters.abortedTotal).toBe(1);
  });

  it('refuses what can never fit and a full queue', () => {
    const { core } = setup({ kvBlocks: 10, maxQueued: 1, maxRunning: 1 });
    const obs = { onToken() {}, onFinish() {} };
    expect(core.submit({ promptTokens: new Array(200).fill(1), maxTokens: 1, ignoreEos: true }, obs)).toMatchObject({
      ok: false,
      reason: 'kv_capacity',
    });
    expect(core.submit({ promptTokens: [1], maxTokens: 1, ignoreEos: true }, obs).ok).toBe(true);
    expect(core.submit({ promptTokens: [1], maxTokens: 1, ignoreEos: true }, obs)).toEqual({ ok: false, reason: 'queue_full' });
  });

  it('evicts under memory pressure and blocks the queue head until memory frees (HOL)', () => {
    const { clock, core, submit } = setup({ kvBlocks: 40, blockSize: 16 });
    const big = submit(longPrompt('big', 400), 100); // 32 blocks
    const next = submit(longPrompt('next', 200), 10); // 14 blocks: cannot fit alongside
    clock.advance(20);
    expect(core.runningCount).toBe(1);
    expect(core.waitingCount).toBe(1);
    clock.runUntilIdle();
    expect(next.admittedAt).toBeGreaterThanOrEqual(big.finishedAt);
    expect(core.cache.evictions).toBeGreaterThan(0);
  });
});
