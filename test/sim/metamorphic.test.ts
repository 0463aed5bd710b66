import { describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_PARAMS, EngineCore, ManualClock, Rng } from '../../src/sim/index.js';
import type { EngineParams, Flavor } from '../../src/sim/index.js';

/**
 * Metamorphic relations of one simulated engine, on seeded traffic: change one thing a
 * user would expect to help, and check that what the user sees (time to first token)
 * does not get worse. They catch a hit rate that moves while latencies stay put.
 */
const tokens = (seed: number, n: number): number[] => {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => 100 + Math.floor(rng.next() * 30_000));
};

interface Arrival {
  atMs: number;
  prompt: number[];
  maxTokens: number;
}

/** Seeded background traffic: prompts no other request shares, so a cache changes nothing for them. */
function background(seed: number, count: number, spanMs: number): Arrival[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, (_, i) => ({
    atMs: Math.floor(rng.next() * spanMs),
    prompt: tokens(seed * 1000 + i, 200 + Math.floor(rng.next() * 3000)),
    maxTokens: 1 + Math.floor(rng.next() * 120),
  })).sort((a, b) => a.atMs - b.atMs);
}

/** Replay `arrivals` on a fresh engine and return the TTFT of the one at `probe`. */
function ttftOf(params: EngineParams, flavor: Flavor, arrivals: readonly Arrival[], probe: number): number {
  const clock = new ManualClock(0);
  const core = new EngineCore(params, clock, 7, 0, flavor);
  let ttft = NaN;
  arrivals.forEach((a, i) =>
    clock.schedule(a.atMs, () => {
      const r = core.submit(
        { promptTokens: a.prompt, maxTokens: a.maxTokens, ignoreEos: true },
        { onToken: (_p, index, at) => void (i === probe && index === 0 && (ttft = at - a.atMs)), onFinish() {} },
      );
      expect(r.ok).toBe(true);
    }),
  );
  clock.runUntilIdle();
  core.close();
  return ttft;
}

const FLAVORS: Flavor[] = ['sglang', 'vllm'];
const byTime = (a: Arrival, b: Arrival): number => a.atMs - b.atMs;

describe('a cached prefix never makes the first token later', () => {
  for (const flavor of FLAVORS) {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      it(`${flavor}, seed ${seed}`, () => {
        const params = { ...DEFAULT_ENGINE_PARAMS, kvBlocks: 4096, maxRunning: 8 };
        const shared = tokens(seed + 77, 4096);
        const probe: Arrival = { atMs: 2000, prompt: shared.concat(tokens(seed + 78, 300)), maxTokens: 32 };
        // The same engine state but for the cache's content: a warm-up of the same length,
        // either the probe's prefix or other tokens, long finished when the probe arrives.
        const warm = (prompt: number[]): Arrival[] =>
          [{ atMs: 0, prompt, maxTokens: 8 }, ...background(seed, 30, 4000), probe].sort(byTime);
        const withPrefix = warm(shared);
        const without = warm(tokens(seed + 79, shared.length));
        const hit = ttftOf(params, flavor, withPrefix, withPrefix.indexOf(probe));
        const miss = ttftOf(params, flavor, without, without.indexOf(probe));
        // Never later; and here, with 4,096 of its 4,396 tokens cached, sooner.
        expect(hit).toBeLessThan(miss);
        expect(hit).toBeGreaterThan(0);
      });
    }
  }
});

describe('halving the per-token prefill cost', () => {
  for (const flavor of FLAVORS) {
    for (const n of [16_384, 32_768, 65_536]) {
      it(`${flavor}: cuts the first token of a ${n}-token prompt on an idle engine by 40–50 %`, () => {
        const params = { ...DEFAULT_ENGINE_PARAMS, kvBlocks: 8192 };
        const alone = [{ atMs: 0, prompt: tokens(n, n), maxTokens: 4 }];
        const full = ttftOf(params, flavor, alone, 0);
        const half = ttftOf({ ...params, beta1Ms: params.beta1Ms / 2 }, flavor, alone, 0);
        const cut = 1 - half / full;
        expect(cut).toBeGreaterThanOrEqual(0.4);
        expect(cut).toBeLessThanOrEqual(0.5);
      });
    }
  }
});
