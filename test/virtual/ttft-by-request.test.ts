import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { runTraceVirtual } from '../../src/virtual/index.js';
import { conversationTrace, SMALL_CONVERSATIONS } from '../../src/workload/index.js';

/**
 * Each request's own TTFT (ttftMsByRequest), which `bench compare --recommend` slices
 * one replay into windows by (docs/bench.md §Recommend): the same values as the run's
 * TTFTs, by trace request, and NaN exactly for the requests that got no first token.
 */
describe('the virtual replay keeps each request its TTFT', () => {
  const trace = conversationTrace({
    requests: 300,
    rate: 40,
    ...SMALL_CONVERSATIONS,
    seed: 3,
  }).map((r, i) => (i % 50 === 7 ? { ...r, inputLength: 40_000 } : r));

  it('the same TTFTs as the run reports, in trace order, NaN for each refused request', () => {
    const r = runTraceVirtual({
      config: { ...defaultConfig(), workerQueueLimit: 4 },
      workers: 3,
      engine: { kvBlocks: 1024, maxRunning: 8, maxModelLen: 32_768 },
      seed: 5,
      trace,
      traceBlockSize: 64,
    });
    expect(r.refused).toBe(6);
    expect(r.ttftMsByRequest).toHaveLength(trace.length);
    const got = [...r.ttftMsByRequest].filter((t) => !Number.isNaN(t));
    expect(got.sort((a, b) => a - b)).toEqual([...r.ttftMs].sort((a, b) => a - b));
    expect(trace.length - got.length).toBe(r.refused + r.failures);
    trace.forEach((_, i) => expect(Number.isNaN(r.ttftMsByRequest[i]!)).toBe(i % 50 === 7));
  });
});
