import { describe, expect, it } from 'vitest';
import { LoadTable } from '../../src/router/state/load_monitor/index.js';
import type { RankReading } from '../../src/router/state/load_monitor/index.js';
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

describe('LoadTable (spec §7.7)', () => {
  it('sums queue depth across ranks', () => {
    const { t, workers } = table(1);
    t.apply(workers[0]!, [[0, r(3, 2)], [1, r(4, 5)]], 0);
    expect(t.view(10).basic(workers[0]!)).toMatchObject({ waiting: 7, running: 7, usedTokens: 20, maxTotalTokens: 200 });
  });

  it('drops stale entries from the view', () => {
    const { t, workers } = table(1);
    t.apply(workers[0]!, [[0, r(3)]], 0);
    expect(t.view(5000).basic(workers[0]!)).toBeDefined();
    expect(t.view(5001).basic(workers[0]!)).toBeUndefined();
  });

  it('excludes a partly fresh worker (a silent rank never makes it look idle)', () => {
    const { t, workers } = table(1);
    t.apply(workers[0]!, [[0, r(3)], [1, r(9)]], 0);
    t.apply(workers[0]!, [[0, r(3)]], 4000);
    expect(t.view(4500).basic(workers[0]!)).toBeDefined();
    expect(t.view(5001).basic(workers[0]!)).toBeUndefined();
  });

  it('excludes a worker missing an expected rank', () => {
    const { t, workers } = table(1);
    t.setExpectedRanks(workers[0]!, 2);
    t.apply(workers[0]!, [[0, r(3)]], 0);
    expect(t.view(1).basic(workers[0]!)).toBeUndefined();
    t.apply(workers[0]!, [[1, r(1)]], 2);
    expect(t.view(3).basic(workers[0]!)?.waiting).toBe(4);
  });

  it('stamps the aggregate with the oldest rank time', () => {
    const { t, workers } = table(1);
    t.apply(workers[0]!, [[0, r(1)]], 100);
    t.apply(workers[0]!, [[1, r(1)]], 300);
    expect(t.view(400).basic(workers[0]!)?.capturedAt).toBe(100);
    expect(t.sampleAge(workers[0]!, 400)).toBe(300);
  });

  it('forget clears all ranks, and unknown answers clear the sample', () => {
    const { t, workers } = table(2);
    t.apply(workers[0]!, [[0, r(1)], [1, r(2)]], 0);
    t.forget(workers[0]!);
    expect(t.view(1).basic(workers[0]!)).toBeUndefined();
    expect(t.workers).toHaveLength(1);
    t.apply(workers[1]!, [[0, r(1)]], 0);
    t.markUnknown(workers[1]!);
    expect(t.view(1).basic(workers[1]!)).toBeUndefined();
    expect(t.sampled).toBe(0);
  });

  it('keeps native data only when every rank carries it with capacity', () => {
    const { t, workers } = table(1);
    const nat = (waiting: number): RankReading => ({ ...r(waiting), native: { waitingUncachedTokens: 50, totalTokens: 60, maxRunningRequests: 8 } });
    t.setNativeTrusted(workers[0]!, true);
    t.apply(workers[0]!, [[0, nat(1)], [1, r(2)]], 0);
    expect(t.view(1).native(workers[0]!)).toBeUndefined();
    t.apply(workers[0]!, [[1, nat(2)]], 1);
    expect(t.view(2).native(workers[0]!)).toMatchObject({ waitingUncachedTokens: 100, totalTokens: 120, maxRunningRequests: 16 });
  });

  it('keeps untrusted native fields for display but never hands them to admission', () => {
    const { t, workers } = table(1);
    t.apply(workers[0]!, [[0, { ...r(1), native: { waitingUncachedTokens: 50, totalTokens: 60, maxRunningRequests: 8 } }]], 0);
    expect(t.view(1).native(workers[0]!)).toBeUndefined();
    expect(t.lastNative(workers[0]!)?.maxRunningRequests).toBe(8);
    expect(t.view(1).basic(workers[0]!)?.waiting).toBe(1);
  });

  it('keeps the O(1) pool counters equal to a full scan over random sample sequences', () => {
    const rng = new Rng(3);
    for (let trial = 0; trial < 20; trial++) {
      const n = 1 + rng.int(12);
      const { t, workers } = table(n, 1000);
      const limit = 1 + rng.int(6);
      const floor = rng.next() < 0.5 ? null : 1 + rng.int(limit);
      t.setGate(limit, floor);
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
