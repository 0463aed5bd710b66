import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import { runTraceVirtual } from '../../src/virtual/index.js';
import {
  conversationTrace,
  SMALL_CONVERSATIONS,
  fleetKvTraceBlocks,
  sharedLruReference,
  traceCacheCeiling,
} from '../../src/workload/index.js';

/**
 * Metamorphic relations of the virtual replay, on seeded conversation traces (shared
 * system prompts, growing turns): outcomes a user sees must move the way the change
 * says they should. They catch a hit rate that moves while every latency stays put.
 */
const TRACE_BLOCK = 64;
const trace = (seed: number, rate = 8) =>
  conversationTrace({
    requests: 400,
    rate,
    ...SMALL_CONVERSATIONS,
    blockSize: TRACE_BLOCK,
    seed,
  });
const config = (o: Partial<RouterConfig> = {}): RouterConfig => ({ ...defaultConfig(), ...o });
const ENGINE_BLOCK = 16;
const replay = (seed: number, o: { policy?: RouterConfig['policy']; kvBlocks: number; workers?: number }) =>
  runTraceVirtual({
    config: config(o.policy ? { policy: o.policy } : {}),
    workers: o.workers ?? 4,
    engine: { kvBlocks: o.kvBlocks, maxRunning: 16, blockSize: ENGINE_BLOCK },
    seed,
    trace: trace(seed),
    traceBlockSize: TRACE_BLOCK,
  });

describe('the virtual replay on seeded traces', () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: more KV never lowers the cached tokens under the same routing (round robin)`, () => {
      let last = -1;
      for (const kvBlocks of [512, 1024, 2048, 8192]) {
        const r = replay(seed, { policy: 'round_robin', kvBlocks });
        expect(r.refused).toBe(0);
        expect(r.cachedTokens).toBeGreaterThanOrEqual(last);
        last = r.cachedTokens;
      }
    });

    it(`seed ${seed}: no policy passes the infinite-cache ceiling, and round robin caches no more than cache_aware`, () => {
      const ceiling = traceCacheCeiling(trace(seed), { traceBlockSize: TRACE_BLOCK, engineBlockSize: ENGINE_BLOCK });
      const rr = replay(seed, { policy: 'round_robin', kvBlocks: 2048 });
      const ca = replay(seed, { policy: 'cache_aware', kvBlocks: 2048 });
      expect(rr.promptTokens).toBe(ceiling.inputTokens);
      expect(ca.promptTokens).toBe(ceiling.inputTokens);
      expect(ca.cachedTokens).toBeLessThanOrEqual(ceiling.cachedTokens);
      expect(rr.cachedTokens).toBeLessThanOrEqual(ca.cachedTokens);
      expect(ca.cachedTokens).toBeGreaterThan(0);
      // With KV to spare, affinity comes within 1 % of the ceiling: the two count a hit alike.
      const ample = replay(seed, { policy: 'cache_aware', kvBlocks: 8192 });
      expect(ample.cachedTokens).toBeLessThanOrEqual(ceiling.cachedTokens);
      expect(ample.cachedTokens).toBeGreaterThanOrEqual(0.99 * ceiling.cachedTokens);
    });

    it(`seed ${seed}: adding a worker never lowers the shared-LRU reference point`, () => {
      let last = -1;
      for (let workers = 1; workers <= 8; workers++) {
        const capacityBlocks = fleetKvTraceBlocks({ workers, kvBlocks: 256, blockSize: ENGINE_BLOCK }, TRACE_BLOCK);
        const lru = sharedLruReference(trace(seed), { traceBlockSize: TRACE_BLOCK, engineBlockSize: ENGINE_BLOCK, capacityBlocks });
        expect(lru.cachedTokens).toBeGreaterThanOrEqual(last);
        last = lru.cachedTokens;
      }
    });
  }

  it('a trace whose longest request is 126K tokens refuses none at the default context length, on 32,768 blocks per engine', () => {
    const long = [
      { atMs: 0, inputLength: 126_195, outputLength: 343, hashIds: Array.from({ length: 247 }, (_, i) => i) },
      { atMs: 10, inputLength: 891, outputLength: 20, hashIds: [0, 1] },
    ];
    const r = runTraceVirtual({ config: config(), workers: 2, engine: { kvBlocks: 32_768 }, seed: 1, trace: long, traceBlockSize: 512 });
    expect(r.refused).toBe(0);
    expect(r.refusedBy).toEqual({ contextLength: 0, kvCapacity: 0, queueFull: 0 });
    expect(r.finished).toBe(2);
    // On a 32,768-token context the long one is refused, and the reason is the context, not the cache.
    const short = runTraceVirtual({
      config: config(),
      workers: 2,
      engine: { kvBlocks: 32_768, maxModelLen: 32_768 },
      seed: 1,
      trace: long,
      traceBlockSize: 512,
    });
    expect(short.refusedBy).toEqual({ contextLength: 1, kvCapacity: 0, queueFull: 0 });
  });
});
