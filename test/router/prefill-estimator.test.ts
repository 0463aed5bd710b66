import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import {
  ADMISSION_LATE_QUANTILE,
  AHEAD_MIN_SAMPLES,
  LATE_WINDOW_MS,
  PREFILL_MIN_SAMPLES,
  PREFILL_WINDOW,
  PrefillEstimator,
  PrefillTicket,
  theilSen,
} from '../../src/router/policies/prefill-rate/index.js';
import { DEFAULT_ENGINE_PARAMS } from '../../src/sim/index.js';
import { runTraceVirtual } from '../../src/virtual/index.js';
import { conversationTrace, SMALL_CONVERSATIONS } from '../../src/workload/index.js';

const fit = (pts: Array<[number, number]>) =>
  theilSen(
    Float64Array.from(pts, (p) => p[0]),
    Float64Array.from(pts, (p) => p[1]),
    pts.length,
    new Uint32Array(pts.length),
    new Float64Array(pts.length),
  );

describe('theilSen: the medians of slopes half the order apart, and of what they leave', () => {
  it.each([
    { name: 'points on a line', pts: [1, 2, 3, 4, 5].map((x) => [x, 3 + 2 * x] as [number, number]), slope: 2, intercept: 3 },
    {
      name: 'a fifth of the points anywhere at all',
      pts: [
        ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((x) => [x * 100, 10 + 0.05 * x * 100] as [number, number]),
        [150, 9000],
        [420, 0],
        [880, 7000],
      ],
      slope: 0.05,
      intercept: 10,
    },
    {
      name: 'two points',
      pts: [
        [100, 20],
        [300, 40],
      ] as Array<[number, number]>,
      slope: 0.1,
      intercept: 10,
    },
  ])('$name', ({ pts, slope, intercept }) => {
    const line = fit(pts)!;
    expect(line.slope).toBeCloseTo(slope, 9);
    expect(line.intercept).toBeCloseTo(intercept, 9);
  });

  it('has no slope when every x is the same', () => {
    expect(
      fit([
        [5, 1],
        [5, 2],
        [5, 3],
      ]),
    ).toBeNull();
  });
});

describe('PrefillEstimator: cold until it has seen enough', () => {
  const feed = (e: PrefillEstimator, xs: number[], line = (x: number) => 8 + x / 20): void => {
    for (const x of xs) e.observe(x, line(x));
  };
  const spread = (n: number): number[] => Array.from({ length: n }, (_, i) => 200 + 100 * (i % 10));

  it(`gives nothing before ${PREFILL_MIN_SAMPLES} samples, then the rate and the base`, () => {
    const e = new PrefillEstimator();
    feed(e, spread(PREFILL_MIN_SAMPLES - 1));
    expect(e.current).toBeNull();
    feed(e, [650]);
    expect(e.current).toMatchObject({ samples: PREFILL_MIN_SAMPLES });
    expect(e.current!.tokensPerSecond).toBeCloseTo(20_000, 6);
    expect(e.current!.baseMs).toBeCloseTo(8, 6);
  });

  it('gives nothing from prompts of one size, nor from a line that does not rise', () => {
    const same = new PrefillEstimator();
    feed(
      same,
      Array.from({ length: 40 }, (_, i) => 1000 + (i % 3)),
    );
    expect(same.current).toBeNull();
    const flat = new PrefillEstimator();
    feed(flat, spread(40), () => 30);
    expect(flat.current).toBeNull();
  });

  it('ignores samples that cannot be times: no tokens, negative or infinite', () => {
    const e = new PrefillEstimator();
    for (const [x, y] of [
      [0, 5],
      [-3, 5],
      [100, -1],
      [Infinity, 3],
      [100, NaN],
    ] as const)
      e.observe(x, y);
    expect(e.samples).toBe(0);
  });

  it(`follows an engine that changed: after ${PREFILL_WINDOW} samples of the new one, only the new one counts`, () => {
    const e = new PrefillEstimator();
    feed(e, spread(PREFILL_WINDOW));
    feed(e, spread(PREFILL_WINDOW), (x) => 8 + x / 5);
    expect(e.current!.tokensPerSecond).toBeCloseTo(5_000, 6);
  });

  it(`learns what pending prefill weighs from ${AHEAD_MIN_SAMPLES} samples sent behind some: all of it where prefills batch, none where each is timed alone`, () => {
    for (const w of [1 / 20, 0]) {
      const e = new PrefillEstimator();
      // 23: fitted at 12 and 20, so that the cadence alone would refit at the fifth sample below, not the eighth.
      feed(e, spread(23));
      for (let i = 0; i < AHEAD_MIN_SAMPLES; i++) {
        const own = 300 + 40 * i;
        const ahead = 100 + 150 * i;
        e.observe(own, 8 + own / 20 + w * ahead, ahead);
        // Until then a pending token weighs what the engine's own do (1/20 ms): a batching engine's.
        if (i < AHEAD_MIN_SAMPLES - 1) expect(e.current!.aheadMsPerToken).toBeCloseTo(1 / 20, 9);
      }
      // Learnt at once from the eighth, whatever the refit cadence: the prior does not outlive its evidence.
      expect(e.current!.aheadMsPerToken).toBeCloseTo(w, 9);
      feed(e, spread(8));
      expect(e.current!.aheadMsPerToken).toBeCloseTo(w, 9);
      expect(e.current!.tokensPerSecond).toBeCloseTo(20_000, 6);
      // Predictions are in the router's tokens, made the engine's through the scale.
      e.pending = 1000;
      e.observeScale(300, 200);
      expect(e.predictMs(400)).toBeCloseTo(8 + 600 / 20 + w * 1500, 6);
    }
  });

  it('a ticket is pending on its engine until its first byte, once, and samples only a quiet send', () => {
    const e = new PrefillEstimator();
    const a = new PrefillTicket(e, 300, true);
    const b = new PrefillTicket(e, 500, false);
    expect([a.ahead, b.ahead, e.pending]).toEqual([0, 300, 800]);
    a.firstByte(25);
    a.begun();
    expect(e.pending).toBe(500);
    b.firstByte(90);
    expect([e.pending, e.samples]).toEqual([0, 1]);
  });

  it(`adds how late first bytes came beside the line, of the last ${LATE_WINDOW_MS / 1000} s only, quiet or not`, () => {
    const e = new PrefillEstimator();
    feed(e, spread(20));
    // 500 tokens: 8 + 25 = 33 ms on the line.
    expect(e.predictMs(500, 0, 0)).toBeCloseTo(33, 6);
    // Eight first bytes of requests sent behind a full queue (not quiet), each 300 ms later than predicted at the send.
    for (let i = 0; i < 8; i++) {
      const t = new PrefillTicket(e, 500, false);
      t.arrived(33 + 300 + 10 * i, 1000 + i);
      t.arrived(9999, 1000 + i); // once only
    }
    expect(e.samples).toBe(20);
    // Lateness 300..370 ms, nearest rank: the gate's lower quartile reads 310, admission's 90th percentile 370.
    expect(e.lateness(2000)).toBe(310);
    expect(e.lateness(2000, ADMISSION_LATE_QUANTILE)).toBe(370);
    expect(e.predictMs(500, 0, 2000)).toBeCloseTo(33 + 310, 6);
    expect(e.soonestMs(500, 2000, ADMISSION_LATE_QUANTILE)).toBeCloseTo(33 + 370, 6);
    // Without a clock, or once the window has passed them by, they count for nothing.
    expect(e.predictMs(500)).toBeCloseTo(33, 6);
    expect(e.predictMs(500, 0, 1008 + LATE_WINDOW_MS)).toBeCloseTo(33, 6);
    // Early first bytes may lower what the ahead term says, never below the line with nothing ahead.
    for (let i = 0; i < 8; i++) new PrefillTicket(e, 500, false).arrived(0, 50_000);
    e.pending = 10_000;
    expect(e.predictMs(500, 0, 50_000)).toBeCloseTo(33 + 500 - 33, 6);
    e.pending = 0;
    expect(e.predictMs(500, 0, 50_000)).toBeCloseTo(33, 6);
    e.reset();
    expect(e.lateness(50_000)).toBe(0);
  });
});

describe('the learned rate on simulated engines that know the truth', () => {
  // Half the fleet twice as fast: an engine's true rate is speedup / β1 (docs/simulator.md).
  // The simulator's tokenizing time per *prompt* token (α1) is off: it grows with the
  // whole prompt, cached or not, so it is no part of the rate per uncached token, and on
  // conversations (where longer turns come with longer histories) it tilts the line
  // (with it on, 41,800 to 60,800 tokens/s is learnt for 57,971: docs/routing.md §Learned prefill rate).
  // Twelve applications, so that every engine owns some and serves requests to learn from.
  const speeds = [1, 2, 1, 2];
  const run = (seed: number) =>
    runTraceVirtual({
      config: { ...defaultConfig(), workerQueueLimit: 4, loadPollIntervalMs: 50 },
      workers: speeds.length,
      engine: { kvBlocks: 4096, maxRunning: 16, maxModelLen: 32_768, alpha1Ms: 0 },
      engines: speeds.map((speedup) => ({ speedup })),
      seed,
      trace: conversationTrace({ requests: 1500, rate: 12, ...SMALL_CONVERSATIONS, apps: 12, seed }),
      traceBlockSize: SMALL_CONVERSATIONS.blockSize,
    });

  it.each([7, 8, 9])(
    'converges within a tenth of each engine’s own rate (seed %i): a constant cannot, the engines differ twofold',
    (seed) => {
      const learned = run(seed).learnedPrefill;
      speeds.forEach((speedup, i) => {
        const truth = (1000 * speedup) / DEFAULT_ENGINE_PARAMS.beta1Ms;
        expect(learned[i], `engine ${i}`).not.toBeNull();
        const got = learned[i]!.tokensPerSecond;
        expect(Math.abs(got / truth - 1), `engine ${i}: ${got.toFixed(0)} tokens/s against ${truth.toFixed(0)}`).toBeLessThan(0.1);
      });
    },
  );
});
