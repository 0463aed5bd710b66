import { beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { autoRate, EMBEDDED_ENGINE, EMBEDDED_WORKLOAD } from '../../src/embedded/index.js';
import { runVirtual } from '../../src/virtual/index.js';
import type { DecisionWindow, VirtualRunResult } from '../../src/virtual/index.js';

/**
 * The embedded default is the demo a new operator sees first (`npm start --
 * --worker-queue-limit 6`), so its traffic must show the gate at work: diversions in
 * every stretch, saturation in bursts, and no permanently saturated fleet
 * (docs/simulator.md §The embedded default). Checked on the simulated clock with the
 * router's own policy, load table and prefix index, so the result does not depend on
 * how busy the machine running the tests is.
 */
const WORKERS = 4;
const DURATION_S = 360;
const SPAN_S = 120;

type Totals = { decisions: number; diverted: number; allQueued: number };

function totals(windows: readonly DecisionWindow[]): Totals {
  const t = { decisions: 0, diverted: 0, allQueued: 0 };
  for (const w of windows) {
    const d = w.decisions;
    t.decisions += d.cache_hit + d.cache_miss + d.cache_worker_queued + d.all_queued;
    t.diverted += d.cache_worker_queued;
    t.allQueued += d.all_queued;
  }
  return t;
}

describe('the embedded default traffic shape (limit 6, simulated clock)', () => {
  let result: VirtualRunResult;
  let windows: DecisionWindow[];
  let spans: Array<Totals & { startS: number }>;
  beforeAll(() => {
    result = runVirtual({
      config: { ...defaultConfig(), workerQueueLimit: 6 },
      workers: WORKERS,
      engine: EMBEDDED_ENGINE,
      workload: { ...EMBEDDED_WORKLOAD, rate: autoRate(WORKERS) },
      durationS: DURATION_S,
      windowS: 1,
      seed: EMBEDDED_WORKLOAD.seed,
    });
    // Windows ending before the run does: requests still running at the end are not booked.
    windows = result.windows.slice(0, DURATION_S);
    spans = Array.from({ length: windows.length - SPAN_S + 1 }, (_, i) => ({ startS: i, ...totals(windows.slice(i, i + SPAN_S)) }));
  }, 120_000);

  it('every request is routed and served', () => {
    expect(result.failures).toBe(0);
    expect(result.refused).toBe(0);
    expect(result.sent).toBeGreaterThan(DURATION_S * autoRate(WORKERS));
  });

  it('in every 2 minutes, at least 5 % of decisions are diversions (cache_worker_queued)', () => {
    const worst = spans.reduce((a, b) => (b.diverted / b.decisions < a.diverted / a.decisions ? b : a));
    expect(worst.diverted / worst.decisions, `2 minutes from ${worst.startS} s`).toBeGreaterThanOrEqual(0.05);
  });

  it('in every 2 minutes, at most 25 % are all_queued, and at least one is: the fleet saturates, but not for good', () => {
    for (const s of spans) {
      expect(s.allQueued / s.decisions, `2 minutes from ${s.startS} s`).toBeLessThanOrEqual(0.25);
      expect(s.allQueued, `2 minutes from ${s.startS} s`).toBeGreaterThan(0);
    }
  });

  it('saturation comes with the bursts: most all_queued decisions fall in a burst or the seconds it takes to drain', () => {
    const { burstEverySeconds: every, burstSeconds: burst } = EMBEDDED_WORKLOAD;
    const drainS = 5;
    let inBurst = 0;
    let all = 0;
    for (const w of windows) {
      const phase = w.startS % every;
      all += w.decisions.all_queued;
      if (phase >= every - burst || phase < drainS) inBurst += w.decisions.all_queued;
    }
    expect(all).toBeGreaterThan(0);
    expect(inBurst / all).toBeGreaterThan(0.8);
  });
});

describe('the embedded default warms up (simulated clock)', () => {
  const run = (sessionRampSeconds: number): VirtualRunResult =>
    runVirtual({
      config: { ...defaultConfig(), workerQueueLimit: 6 },
      workers: WORKERS,
      engine: EMBEDDED_ENGINE,
      workload: { ...EMBEDDED_WORKLOAD, sessionRampSeconds, rate: autoRate(WORKERS) },
      durationS: 120,
      windowS: 10,
      seed: EMBEDDED_WORKLOAD.seed,
    });
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  it('users join over the first 90 s: requests finish in every 10 s from the start, and the first 30 s are no slower than the next 90', () => {
    const w = run(EMBEDDED_WORKLOAD.sessionRampSeconds).windows.slice(0, 12);
    expect(EMBEDDED_WORKLOAD.sessionRampSeconds).toBe(90);
    for (const x of w) expect(x.e2eMs.length, `finished in the 10 s from ${x.startS} s`).toBeGreaterThanOrEqual(5);
    const early = w.slice(0, 3).flatMap((x) => x.e2eMs);
    const later = w.slice(3).flatMap((x) => x.e2eMs);
    expect(median(early)).toBeLessThanOrEqual(median(later));
  });

  it('all users at once is the cold-cache storm the ramp avoids: almost nothing finishes in the first 30 s', () => {
    const w = run(0).windows.slice(0, 3);
    expect(w.reduce((a, x) => a + x.e2eMs.length, 0)).toBeLessThan(20);
  });
});
