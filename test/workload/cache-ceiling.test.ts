import { describe, expect, it } from 'vitest';
import {
  conversationTrace,
  countOverContext,
  fleetKvTraceBlocks,
  sharedLruReference,
  traceCacheCeiling,
} from '../../src/workload/index.js';
import type { TraceRequest } from '../../src/workload/index.js';

/** A request of `input` tokens over hash ids of 4 tokens each. */
const req = (ids: number[], input = ids.length * 4, output = 1): TraceRequest => ({
  atMs: 0,
  inputLength: input,
  outputLength: output,
  hashIds: ids,
});
const tiny = { traceBlockSize: 4, engineBlockSize: 1 };

describe('the infinite-cache ceiling (docs/simulator.md §The cache ceiling)', () => {
  it.each<[string, TraceRequest[], { traceBlockSize: number; engineBlockSize: number }, number, number]>([
    // name, trace, blocks, cached tokens, repeated references
    ['all blocks distinct', [req([1, 2]), req([3, 4]), req([5])], tiny, 0, 0],
    // The second request hits both blocks but computes its last token: 7 of 8.
    ['the same prompt twice', [req([1, 2]), req([1, 2])], tiny, 7, 2],
    // Id 2 repeats, but under another prefix: a reference repeats, no token is cached.
    ['a repeated id under another prefix', [req([1, 2]), req([3, 2])], tiny, 0, 1],
    // The first prompt's partial block 2 (2 tokens) is a prefix of the second's full one: 4 + 2 tokens.
    ['a partial block, then the full one', [req([1, 2], 6), req([1, 2, 3], 12)], tiny, 6, 2],
    // The same, counted in engine blocks of 4: only the first block is whole.
    ['a partial block, engine blocks of 4', [req([1, 2], 6), req([1, 2, 3], 12)], { traceBlockSize: 4, engineBlockSize: 4 }, 4, 2],
    // A shorter prompt after a longer one: its 6 tokens are held, its last one is computed.
    ['a full block, then a partial one', [req([1, 2, 3], 12), req([1, 2], 6)], tiny, 5, 2],
    [
      'a full block, then a partial one, engine blocks of 2',
      [req([1, 2, 3], 12), req([1, 2], 6)],
      { traceBlockSize: 4, engineBlockSize: 2 },
      4,
      2,
    ],
    // A tree: the second shares two blocks, the third one.
    ['a branching prefix', [req([1, 2, 3]), req([1, 2, 4]), req([1, 5])], tiny, 8 + 4, 2 + 1],
  ])('%s', (_name, trace, blocks, cached, repeated) => {
    const c = traceCacheCeiling(trace, blocks);
    const input = trace.reduce((s, r) => s + r.inputLength, 0);
    const references = trace.reduce((s, r) => s + r.hashIds.length, 0);
    expect(c).toEqual({
      requests: trace.length,
      inputTokens: input,
      cachedTokens: cached,
      cachedTokenShare: cached / input,
      blockReferences: references,
      repeatedReferences: repeated,
      repeatedReferenceShare: repeated / references,
    });
  });

  it('is 0 for an empty trace and for a trace whose blocks are all distinct', () => {
    expect(traceCacheCeiling([], tiny).cachedTokenShare).toBe(0);
    const distinct = Array.from({ length: 50 }, (_, i) => req([3 * i, 3 * i + 1, 3 * i + 2], 11));
    const c = traceCacheCeiling(distinct, tiny);
    expect(c.cachedTokens).toBe(0);
    expect(c.repeatedReferenceShare).toBe(0);
  });

  it('keys ids beyond what a number key holds exactly', () => {
    const big = Number.MAX_SAFE_INTEGER - 1;
    expect(traceCacheCeiling([req([big, 7]), req([big, 7])], tiny).cachedTokens).toBe(7);
  });
});

describe('the shared-LRU reference point', () => {
  it.each<[number, number]>([
    // capacity in trace blocks, cached tokens of the third request
    [0, 0],
    // After the second request only its two blocks are left.
    [2, 0],
    // Room for three: the first prompt's leaf goes, its root stays (least-recent leaf first).
    [3, 4],
    [4, 7],
  ])('with %i blocks, a prompt seen two requests ago keeps what fits', (capacity, cached) => {
    const r = sharedLruReference([req([1, 2]), req([3, 4]), req([1, 2])], { ...tiny, capacityBlocks: capacity });
    expect(r.cachedTokens).toBe(cached);
    expect(r.inputTokens).toBe(24);
  });

  it('a prompt longer than the cache keeps its leading blocks', () => {
    expect(sharedLruReference([req([1, 2, 3]), req([1, 2, 3])], { ...tiny, capacityBlocks: 2 }).cachedTokens).toBe(8);
  });

  it('equals the ceiling when nothing is evicted', () => {
    const trace = conversationTrace({ ...CONVERSATIONS, seed: 3 });
    const ceiling = traceCacheCeiling(trace, engine16);
    const lru = sharedLruReference(trace, { ...engine16, capacityBlocks: 1e9 });
    expect(lru.cachedTokens).toBe(ceiling.cachedTokens);
    expect(lru.evictions).toBe(0);
  });

  it('counts a fleet in trace blocks', () => {
    expect(fleetKvTraceBlocks({ workers: 8, kvBlocks: 32768, blockSize: 16 }, 512)).toBe(8192);
  });
});

const CONVERSATIONS = {
  requests: 600,
  rate: 20,
  blockSize: 64,
  apps: 4,
  systemTokens: 512,
  sessions: 24,
  turnTokens: 150,
  outputTokens: 60,
  maxContextTokens: 4000,
};
const engine16 = { traceBlockSize: 64, engineBlockSize: 16 };

describe('the ceiling and the reference point on seeded traces (properties)', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`seed ${seed}: ceiling ≥ shared LRU, and a larger shared cache never caches less`, () => {
      const trace = conversationTrace({ ...CONVERSATIONS, seed });
      const ceiling = traceCacheCeiling(trace, engine16);
      expect(ceiling.cachedTokenShare).toBeGreaterThan(0);
      expect(ceiling.cachedTokenShare).toBeLessThan(1);
      let last = -1;
      for (const capacityBlocks of [0, 4, 16, 64, 128, 256, 512, 1024, 4096]) {
        const lru = sharedLruReference(trace, { ...engine16, capacityBlocks });
        expect(lru.cachedTokens).toBeGreaterThanOrEqual(last);
        expect(lru.cachedTokens).toBeLessThanOrEqual(ceiling.cachedTokens);
        last = lru.cachedTokens;
      }
    });
  }
});

describe('requests over the context length', () => {
  it('counts an input of at least the context, and one whose output would pass it', () => {
    const trace = [req([1], 100, 1), req([2], 99, 1), req([3], 99, 2), req([4], 100, 0)];
    expect(countOverContext(trace, 100)).toBe(3);
    expect(countOverContext(trace, 131_072)).toBe(0);
  });
});
