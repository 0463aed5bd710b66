import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sim/clock.js';
import { DEFAULT_ENGINE_PARAMS } from '../../src/sim/engine-params.js';
import { SimEngine } from '../../src/sim/sim-engine.js';

const prompt = (seed: number, n: number): number[] => Array.from({ length: n }, (_, i) => 1000 + ((seed * 7919 + i * 31) % 30000));

describe('heldPrefixBlocks: what an engine cache holds of a token sequence', () => {
  it('counts whole leading blocks once the prompt is cached, read from the deepest rank', () => {
    const clock = new ManualClock();
    const engine = new SimEngine({
      flavor: 'sglang',
      model: 'm',
      dpSize: 2,
      params: { ...DEFAULT_ENGINE_PARAMS, blockSize: 16 },
      seed: 1,
      clock,
    });
    const p = prompt(1, 100); // 6 whole blocks, 4 tokens unkeyed
    const observer = { onToken: () => {}, onFinish: () => {} };
    expect(engine.submit({ promptTokens: p, maxTokens: 4, ignoreEos: true }, observer, 1).ok).toBe(true);
    // Submitted but not yet prefilled: nothing is cached.
    expect(engine.heldPrefixBlocks(p)).toBe(0);
    clock.runUntilIdle();
    expect(engine.ranks[0]!.heldPrefixBlocks(p)).toBe(0);
    expect(engine.ranks[1]!.heldPrefixBlocks(p)).toBe(6);
    expect(engine.heldPrefixBlocks(p)).toBe(6);
    // A longer prompt sharing the first 40 tokens: its first 2 blocks are held.
    expect(engine.heldPrefixBlocks([...p.slice(0, 40), ...prompt(2, 60)])).toBe(2);
    expect(engine.heldPrefixBlocks(prompt(3, 100))).toBe(0);
    // Reading is not use: the next request still finds exactly what was cached.
    const before = engine.ranks[1]!.cache.cachedBlocks();
    engine.heldPrefixBlocks(p);
    expect(engine.ranks[1]!.cache.cachedBlocks()).toBe(before);
  });
});
