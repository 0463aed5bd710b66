import { describe, expect, it } from 'vitest';
import { POLL_BUDGET_PER_S, pollIntervalMs } from '../../src/router/state/load-monitor/load-sampler.js';

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
