import { describe, expect, it } from 'vitest';
import { POLL_BUDGET_PER_S, pollIntervalMs, pollTickMs } from '../../src/router/state/load-monitor/load-sampler.js';

/** How often each worker is polled (docs/engine-load.md §Polling a large fleet): the configured interval until the fleet outgrows the budget. */
describe('pollIntervalMs', () => {
  it.each([
    // interval, workers, freshness, each worker polled every
    [250, 8, 5000, 250],
    [250, 400, 5000, 250],
    [250, 1000, 5000, 625],
    [250, 2000, 5000, 1250],
    [250, 4096, 5000, 2500],
    [250, 100_000, 5000, 2500],
    [50, 8, 5000, 50],
    [1000, 4096, 1000, 1000],
  ])('interval %d ms, %d workers, freshness %d ms: every %d ms', (interval, workers, freshness, every) => {
    expect(pollIntervalMs(interval, workers, freshness)).toBe(every);
  });

  it('keeps a 4,096-worker fleet inside the budget and every sample fresh', () => {
    const every = pollIntervalMs(250, 4096, 5000);
    expect(4096 / (every / 1000)).toBeLessThanOrEqual(POLL_BUDGET_PER_S * 1.03);
    expect(every).toBeLessThanOrEqual(5000 / 2);
  });
});

/**
 * How long the sampler's tick is (docs/engine-load.md §Polling a large fleet): about four
 * polls a tick, so that their replies never queue a chat behind dozens of them.
 */
describe('pollTickMs', () => {
  it.each([
    // workers, round (ms), tick (ms), polls a tick
    [4096, 2500, 2.44140625, 4],
    [1024, 640, 2.5, 4],
    [400, 250, 2.5, 4],
    [100, 250, 10, 4],
    [65, 250, 15.384615384615385, 4],
    // the first round of 4,096 goes at twice the budget: the finest tick, more polls a tick
    [4096, 1280, 2, 6.4],
    // a fleet too small to split: the coarsest tick
    [65, 1000, 25, 1.625],
    // never longer than the round itself
    [100, 1, 1, 100],
  ])('%d workers over %d ms: a tick of %d ms', (workers, round, tick, polls) => {
    expect(pollTickMs(workers, round)).toBeCloseTo(tick, 9);
    expect((workers * pollTickMs(workers, round)) / round).toBeCloseTo(polls, 9);
  });

  it('polls 4,096 workers at the default interval no more than four at a time (a 25 ms tick sent 41)', () => {
    const every = pollIntervalMs(250, 4096, 5000);
    expect((4096 * pollTickMs(4096, every)) / every).toBeLessThanOrEqual(4);
  });
});
