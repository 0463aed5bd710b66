import { describe, expect, it } from 'vitest';
import { LoadTable } from '../../src/router/state/load-monitor/index.js';
import type { RankReading } from '../../src/router/state/load-monitor/index.js';
import { MAX_RANKS_PER_WORKER } from '../../src/engines/index.js';
import { queueGate } from '../../src/router/policies/queue-gate.js';
import type { PolicyWorker } from '../../src/router/policies/types.js';
import { Rng } from '../../src/sim/rng.js';

const w = (slot: number): PolicyWorker => ({ id: `http://w${slot}:30000`, slot, inflight: 0 });
const r = (waiting: number, running = 1): RankReading => ({ running, waiting, usedTokens: 10, maxTotalTokens: 100 });

function table(n: number, freshness = 5000) {
  const t = new LoadTable(freshness);
  const workers = Array.from({ length: n }, (_, i) => w(i));
  for (const x of workers) {
    t.register(x);
    t.setInPool(x, true);
  }
  return { t, workers };
}

describe('LoadTable (docs/engine-load.md §DP ranks, §Freshness)', () => {
  it('sums queue depth across ranks', () => {
    const { t, workers } = table(1);
    t.apply(
      workers[0]!,
      [
        [0, r(3, 2)],
        [1, r(4, 5)],
      ],
      0,
    );
    expect(t.view(10).basic(workers[0]!)).toMatchObject({ waiting: 7, running: 7, usedTokens: 20, maxTotalTokens: 200 });
  });

  it('drops stale entries from the view', () => {
    const { t, workers } = table(1);
    t.apply(workers[0]!, [[0, r(3)]], 0);
    expect(t.view(5000).basic(workers[0]!)).toBeDefined();
    expect(t.view(5001).basic(workers[0]!)).toBeUndefined();
  });

  it('the same readings given again (a pushed heartbeat) move only the sample time: fresh for a window from then, sums unchanged', () => {
    const { t, workers } = table(2);
    const readings = [[0, r(7)]] as const;
    t.apply(workers[0]!, readings, 0);
    t.apply(workers[1]!, [[0, r(2)]], 0);
    t.apply(workers[0]!, readings, 4000);
    const view = t.view(8000);
    expect(view.basic(workers[0]!)).toMatchObject({ waiting: 7, capturedAt: 4000 });
    expect(view.basic(workers[1]!)).toBeUndefined();
    expect(t.view(9000).basic(workers[0]!)?.waiting).toBe(7);
    expect(t.view(9001).basic(workers[0]!)).toBeUndefined();
  });

  it('a poll that reads the same figures in a new array moves only the sample time; two ranks, fresh for a window from then', () => {
    const { t, workers } = table(1);
    const full = (waiting: number): RankReading => ({ ...r(waiting), totalTokens: 40, maxRunningRequests: 8, waitingUncachedTokens: 30 });
    t.apply(
      workers[0]!,
      [
        [0, full(3)],
        [1, full(4)],
      ],
      0,
    );
    t.apply(
      workers[0]!,
      [
        [0, full(3)],
        [1, full(4)],
      ],
      4000,
    );
    expect(t.view(8000).native(workers[0]!)).toMatchObject({ waiting: 7, totalTokens: 80, waitingUncachedTokens: 60, capturedAt: 4000 });
    expect(t.view(9001).native(workers[0]!)).toBeUndefined();
  });

  // Each figure changed alone in the next poll (a new array) must show: a sample that
  // matches the last one in all but one figure is not the same sample.
  const base: Required<RankReading> = {
    running: 2,
    waiting: 3,
    usedTokens: 10,
    maxTotalTokens: 100,
    totalTokens: 40,
    maxRunningRequests: 8,
    waitingUncachedTokens: 30,
  };
  it.each([
    ['running', 5],
    ['waiting', 9],
    ['usedTokens', 11],
    ['maxTotalTokens', 120],
    ['totalTokens', 41],
    ['maxRunningRequests', 16],
    ['waitingUncachedTokens', 31],
  ] as const)('a poll that changes only %s to %d is applied', (field, value) => {
    const { t, workers } = table(1);
    t.apply(workers[0]!, [[0, { ...base }]], 0);
    t.apply(workers[0]!, [[0, { ...base, [field]: value }]], 1000);
    expect(t.view(1000).native(workers[0]!)).toMatchObject({ [field]: value, capturedAt: 1000 });
  });

  it('a poll that moves a figure to another rank is applied', () => {
    const { t, workers } = table(1);
    t.setExpectedRanks(workers[0]!, 2);
    t.apply(
      workers[0]!,
      [
        [0, r(3)],
        [1, r(4)],
      ],
      0,
    );
    t.apply(
      workers[0]!,
      [
        [0, r(3)],
        [2, r(4)],
      ],
      1000,
    );
    expect(t.view(1000).basic(workers[0]!)).toBeUndefined();
  });

  it('replaces the rank set on each sample: ranks an engine stopped reporting are gone', () => {
    const { t, workers } = table(1);
    t.apply(
      workers[0]!,
      [
        [0, r(3)],
        [1, r(9)],
      ],
      0,
    );
    expect(t.view(1).basic(workers[0]!)?.waiting).toBe(12);
    t.apply(workers[0]!, [[0, r(3)]], 4000);
    expect(t.rankCount(workers[0]!)).toBe(1);
    expect(t.view(4500).basic(workers[0]!)?.waiting).toBe(3);
    expect(t.view(9000).basic(workers[0]!)).toBeDefined();
    expect(t.view(9001).basic(workers[0]!)).toBeUndefined();
  });

  it('with an advertised DP size, a sample missing a rank is no sample (a silent rank never makes it look idle)', () => {
    const { t, workers } = table(1);
    t.setExpectedRanks(workers[0]!, 2);
    t.apply(
      workers[0]!,
      [
        [0, r(3)],
        [1, r(9)],
      ],
      0,
    );
    expect(t.view(1).basic(workers[0]!)?.waiting).toBe(12);
    t.apply(workers[0]!, [[0, r(3)]], 10);
    expect(t.view(11).basic(workers[0]!)).toBeUndefined();
    expect(t.sampled).toBe(0);
  });

  it('keeps memory bounded when an engine reports ever-changing ranks', () => {
    const { t, workers } = table(1);
    for (let i = 0; i < 50_000; i++)
      t.apply(
        workers[0]!,
        [
          [i, r(1)],
          [i + 1, r(2)],
        ],
        i,
      );
    expect(t.rankCount(workers[0]!)).toBe(2);
    expect(t.view(50_000).basic(workers[0]!)?.waiting).toBe(3);
    const tooMany = Array.from({ length: MAX_RANKS_PER_WORKER + 1 }, (_, i) => [i, r(1)] as const);
    expect(t.apply(workers[0]!, tooMany, 50_001)).toBe(false);
    expect(t.rankCount(workers[0]!)).toBe(2);
    expect(MAX_RANKS_PER_WORKER).toBe(1024);
  });

  it('excludes a worker missing an expected rank', () => {
    const { t, workers } = table(1);
    t.setExpectedRanks(workers[0]!, 2);
    t.apply(workers[0]!, [[0, r(3)]], 0);
    expect(t.view(1).basic(workers[0]!)).toBeUndefined();
    t.apply(
      workers[0]!,
      [
        [0, r(3)],
        [1, r(1)],
      ],
      2,
    );
    expect(t.view(3).basic(workers[0]!)?.waiting).toBe(4);
    // Ranks beyond the advertised DP size are not counted.
    t.apply(
      workers[0]!,
      [
        [0, r(3)],
        [1, r(1)],
        [2, r(50)],
      ],
      4,
    );
    expect(t.view(5).basic(workers[0]!)?.waiting).toBe(4);
  });

  it('stamps the sample with its receive time, one time for all its ranks', () => {
    const { t, workers } = table(1);
    t.apply(
      workers[0]!,
      [
        [0, r(1)],
        [1, r(1)],
      ],
      100,
    );
    expect(t.view(150).basic(workers[0]!)?.capturedAt).toBe(100);
    t.apply(
      workers[0]!,
      [
        [0, r(1)],
        [1, r(1)],
      ],
      300,
    );
    expect(t.view(400).basic(workers[0]!)?.capturedAt).toBe(300);
    expect(t.sampleAge(workers[0]!, 400)).toBe(100);
  });

  it('forget clears all ranks, and markUnknown clears the sample', () => {
    const { t, workers } = table(2);
    t.apply(
      workers[0]!,
      [
        [0, r(1)],
        [1, r(2)],
      ],
      0,
    );
    t.forget(workers[0]!);
    expect(t.view(1).basic(workers[0]!)).toBeUndefined();
    expect(t.workers).toHaveLength(1);
    t.apply(workers[1]!, [[0, r(1)]], 0);
    t.markUnknown(workers[1]!);
    expect(t.view(1).basic(workers[1]!)).toBeUndefined();
    expect(t.sampled).toBe(0);
  });

  const nat = (waiting: number, uncached: number | null = 50): RankReading => ({
    ...r(waiting),
    totalTokens: 60,
    maxRunningRequests: 8,
    ...(uncached === null ? {} : { waitingUncachedTokens: uncached }),
  });

  it('keeps native data only when every rank carries capacity', () => {
    const { t, workers } = table(1);
    t.setUncachedTrusted(workers[0]!, true);
    t.apply(
      workers[0]!,
      [
        [0, nat(1)],
        [1, r(2)],
      ],
      0,
    );
    expect(t.view(1).native(workers[0]!)).toBeUndefined();
    t.apply(
      workers[0]!,
      [
        [0, nat(1)],
        [1, nat(2)],
      ],
      1,
    );
    expect(t.view(2).native(workers[0]!)).toMatchObject({
      waitingUncachedTokens: 100,
      totalTokens: 120,
      maxRunningRequests: 16,
      maxTotalTokens: 200,
    });
    expect(t.view(2).native(workers[0]!)).toMatchObject({ uncachedTokensComparable: true });
  });

  it('hands capacity to admission whatever the schedule policy; only a cache-aware policy makes uncached tokens comparable', () => {
    const { t, workers } = table(1);
    t.apply(workers[0]!, [[0, nat(1)]], 0);
    // fcfs (or unknown): capacity fields count, the uncached tokens are raw lengths.
    expect(t.view(1).native(workers[0]!)).toMatchObject({ maxRunningRequests: 8, totalTokens: 60, uncachedTokensComparable: false });
    t.setUncachedTrusted(workers[0]!, true);
    expect(t.view(1).native(workers[0]!)).toMatchObject({ uncachedTokensComparable: true });
    // A rank without the uncached field leaves capacity but not comparability.
    t.apply(workers[0]!, [[0, nat(1, null)]], 2);
    expect(t.view(3).native(workers[0]!)).toMatchObject({ maxRunningRequests: 8, uncachedTokensComparable: false });
    expect(t.lastNative(workers[0]!)?.maxRunningRequests).toBe(8);
    expect(t.view(3).basic(workers[0]!)?.waiting).toBe(1);
  });

  it('keeps the O(1) pool counters equal to a full scan over random sample sequences', () => {
    const rng = new Rng(3);
    for (let trial = 0; trial < 20; trial++) {
      const n = 1 + rng.int(12);
      const { t, workers } = table(n, 1000);
      const limit = 1 + rng.int(6);
      const floor = rng.next() < 0.5 ? null : 1 + rng.int(limit);
      t.setGate(queueGate({ workerQueueLimit: limit, saturationQueueFloor: floor }));
      let now = 0;
      for (let step = 0; step < 400; step++) {
        now += rng.int(200);
        const x = workers[rng.int(n)]!;
        const op = rng.next();
        if (op < 0.6) t.apply(x, [[rng.int(2), r(rng.int(10))]], now);
        else if (op < 0.65) t.markUnknown(x);
        else if (op < 0.75) t.setInPool(x, rng.next() < 0.7);
        else if (op < 0.8) t.setExpectedRanks(x, rng.next() < 0.5 ? undefined : 1 + rng.int(2));
        const view = t.view(now);
        const pool = workers.filter((y) => view.workers.includes(y));
        const fresh = pool.filter((y) => view.basic(y) !== undefined);
        expect(view.sampled).toBe(fresh.length);
        expect(view.queued).toBe(fresh.filter((y) => view.basic(y)!.waiting >= limit).length);
        expect(view.belowFloor).toBe(floor === null ? 0 : fresh.filter((y) => view.basic(y)!.waiting < floor).length);
        expect(view.unqueued).toEqual(pool.filter((y) => !(view.basic(y) && view.basic(y)!.waiting >= limit)));
      }
    }
  });
});
