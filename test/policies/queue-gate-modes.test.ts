import { describe, expect, it } from 'vitest';
import { LoadTable } from '../../src/router/state/load-monitor/index.js';
import type { RankReading } from '../../src/router/state/load-monitor/index.js';
import { AUTO_LIMIT_MIN, autoLimit, queueGate } from '../../src/router/policies/queue-gate.js';
import type { PolicyWorker } from '../../src/router/policies/types.js';

/** The gate modes' rules (docs/routing.md §Gate modes), as tables, and the auto limit following a real load table. */
const w = (slot: number): PolicyWorker => ({ id: `http://w${slot}:30000`, slot, inflight: 0 });
const native = (waiting: number, waitingUncachedTokens?: number): RankReading => ({
  running: 1,
  waiting,
  usedTokens: 10,
  maxTotalTokens: 100_000,
  totalTokens: 10 + (waitingUncachedTokens ?? 0),
  maxRunningRequests: 16,
  ...(waitingUncachedTokens === undefined ? {} : { waitingUncachedTokens }),
});

function fleet(n: number, gate: ReturnType<typeof queueGate>) {
  const t = new LoadTable(5000);
  t.setGate(gate);
  const workers = Array.from({ length: n }, (_, i) => w(i));
  for (const x of workers) {
    t.register(x);
    t.setExpectedRanks(x, 1);
    t.setInPool(x, true);
  }
  const sample = (waiting: readonly number[], tokens?: readonly number[], at = 0): void =>
    workers.forEach((x, i) => t.apply(x, [[0, native(waiting[i]!, tokens?.[i])]], at));
  return { t, workers, sample };
}

describe('the auto limit: the larger of the base and twice the pool mean', () => {
  it.each([
    // base, mean, limit
    [4, 0, 4],
    [4, 1.5, 4],
    [4, 2, 4],
    [4, 2.01, 5],
    [4, 2.5, 5],
    [4, 3.5, 7],
    [2, 0.4, 2],
    [2, 1.2, 3],
    [6, 10, 20],
  ])('base %d, mean %d: limit %d', (base, mean, limit) => {
    expect(autoLimit(base, mean)).toBe(limit);
  });

  it('starts at 6 unless --worker-queue-limit sets the base', () => {
    expect(AUTO_LIMIT_MIN).toBe(6);
    expect(queueGate({ queueGate: 'auto', workerQueueLimit: null, saturationQueueFloor: null }).limit).toBe(6);
    expect(queueGate({ queueGate: 'auto', workerQueueLimit: 7, saturationQueueFloor: null }).limit).toBe(7);
  });
});

describe('isQueued by mode', () => {
  const fixed6 = queueGate({ workerQueueLimit: 6, saturationQueueFloor: null });
  const off = queueGate({ workerQueueLimit: null, saturationQueueFloor: null });
  const tokens = queueGate({ queueGate: 'tokens', queueGateTokens: 286_720, workerQueueLimit: null, saturationQueueFloor: null });
  const auto = queueGate({ queueGate: 'auto', workerQueueLimit: null, saturationQueueFloor: null });
  it.each([
    // gate, waiting, queued tokens, queued
    ['fixed 6', fixed6, 5, undefined, false],
    ['fixed 6', fixed6, 6, undefined, true],
    ['fixed 6 ignores tokens', fixed6, 0, 10_000_000, false],
    ['off', off, 1_000, 10_000_000, false],
    ['tokens', tokens, 1_000, 286_719, false],
    ['tokens', tokens, 0, 286_720, true],
    ['tokens, engine reports no tokens: fail open', tokens, 1_000, undefined, false],
    ['auto at its base', auto, 5, undefined, false],
    ['auto at its base', auto, 6, undefined, true],
  ] as const)('%s: waiting %d, tokens %s → %s', (_name, gate, waiting, queuedTokens, queued) => {
    expect(gate.isQueued(waiting, queuedTokens)).toBe(queued);
  });

  it.each([
    ['fixed 6', fixed6, 'fixed', true, 6, null, 'waiting ≥ 6'],
    ['off', off, 'fixed', false, null, null, null],
    ['tokens', tokens, 'tokens', true, null, 286_720, 'queued prompt tokens ≥ 286,720'],
  ] as const)('%s reads as mode %s, on %s, limit %s, tokens %s: %s', (_name, gate, mode, on, limit, tokenLimit, rule) => {
    expect({ mode: gate.mode, on: gate.on, limit: gate.limit, tokenLimit: gate.tokenLimit, rule: gate.rule() }).toEqual({
      mode,
      on,
      limit,
      tokenLimit,
      rule,
    });
  });
});

describe('the auto gate follows a real load table', () => {
  it('leaves only an owner queueing beyond the pool, and none when the pool queues evenly', () => {
    const { t, workers, sample } = fleet(4, queueGate({ queueGate: 'auto', workerQueueLimit: null, saturationQueueFloor: null }));
    const gate = () => t.view(1);
    sample([9, 1, 1, 1]); // mean 3: limit 6
    expect(gate().queued).toBe(1);
    expect(gate().unqueued).toEqual(workers.slice(1));
    sample([13, 3, 3, 3]); // mean 5.5: limit 11
    expect(gate().queued).toBe(1);
    sample([8, 3, 3, 3]); // mean 4.25: limit 9, and 8 is under it
    expect(gate().queued).toBe(0);
    expect(gate().unqueued).toEqual(workers);
    sample([6, 6, 6, 6]); // mean 6: limit 12
    expect(gate().queued).toBe(0);
  });

  it('recounts a worker it did not hear from when the others move the limit', () => {
    const { t, workers } = fleet(4, queueGate({ queueGate: 'auto', workerQueueLimit: null, saturationQueueFloor: null }));
    for (const x of workers) t.apply(x, [[0, native(7)]], 0); // mean 7: limit 14, none queued
    expect(t.view(1).queued).toBe(0);
    for (const x of workers.slice(1)) t.apply(x, [[0, native(0)]], 0); // mean 1.75: limit 6, and worker 0 still holds 7
    expect(t.view(1).queued).toBe(1);
    expect(t.view(1).unqueued).toEqual(workers.slice(1));
  });

  it('moves the limit when a worker leaves the pool or its sample goes stale', () => {
    const gate = queueGate({ queueGate: 'auto', workerQueueLimit: null, saturationQueueFloor: null });
    const { t, workers, sample } = fleet(3, gate);
    sample([12, 0, 0]); // mean 4: limit 8
    expect(gate.limit).toBe(8);
    expect(t.view(1).queued).toBe(1);
    t.setInPool(workers[1]!, false); // mean 6: limit 12
    expect(gate.limit).toBe(12);
    expect(t.view(1).queued).toBe(1);
    t.apply(workers[2]!, [[0, native(0)]], 4000);
    t.apply(workers[0]!, [[0, native(12)]], 0);
    // At 5,001 ms the owner's sample is stale: the pool mean is worker 2's 0, the limit back to 6.
    expect(t.view(5001).queued).toBe(0);
    expect(gate.limit).toBe(6);
  });

  it('names its rule with the mean it has now', () => {
    const gate = queueGate({ queueGate: 'auto', workerQueueLimit: null, saturationQueueFloor: null });
    const { sample } = fleet(3, gate);
    sample([0, 0, 0]);
    expect(gate.rule()).toBe("waiting ≥ 6 (auto: the larger of 6 and 2 × the pool's mean waiting, 0.0)");
    sample([5, 0, 1]);
    expect(gate.rule()).toBe("waiting ≥ 6 (auto: the larger of 6 and 2 × the pool's mean waiting, 2.0)");
  });
});

describe('the tokens gate reads the engine-reported queued prompt tokens', () => {
  it('queues a worker at τ, and admits one whose engine does not report them', () => {
    const gate = queueGate({ queueGate: 'tokens', queueGateTokens: 100_000, workerQueueLimit: null, saturationQueueFloor: null });
    const { t, workers, sample } = fleet(3, gate);
    sample([2, 9, 30], [100_000, 99_999, 0]);
    expect(t.view(1).queued).toBe(1);
    expect(gate.admits(t.view(1), workers[0]!)).toBe(false);
    expect(gate.admits(t.view(1), workers[1]!)).toBe(true);
    sample([2, 2, 2]);
    expect(gate.admits(t.view(1), workers[0]!)).toBe(true);
  });

  it('reads them whether or not the engine reports its capacity, and not at all when a rank leaves them out: every reader the same', () => {
    const gate = queueGate({ queueGate: 'tokens', queueGateTokens: 100_000, workerQueueLimit: null, saturationQueueFloor: null });
    const t = new LoadTable(5000);
    t.setGate(gate);
    const [bare, partial, whole] = [w(0), w(1), w(2)];
    for (const [x, ranks] of [
      [bare, 1],
      [partial, 2],
      [whole, 2],
    ] as const) {
      t.register(x);
      t.setExpectedRanks(x, ranks);
      t.setInPool(x, true);
    }
    // Queued tokens and no capacity fields; a DP 2 engine one of whose ranks does not say; one whose ranks both do.
    t.apply(bare, [[0, { running: 1, waiting: 1, waitingUncachedTokens: 150_000 }]], 0);
    t.apply(
      partial,
      [
        [0, native(1, 150_000)],
        [1, native(1)],
      ],
      0,
    );
    t.apply(
      whole,
      [
        [0, native(1, 60_000)],
        [1, native(1, 60_000)],
      ],
      0,
    );
    const view = t.view(1);
    const read = (x: PolicyWorker) => view.basic(x)!.queuedTokens;
    expect([read(bare), read(partial), read(whole)]).toEqual([150_000, undefined, 120_000]);
    for (const x of [bare, partial, whole]) expect(gate.admits(view, x)).toBe(!gate.isQueued(1, read(x)));
    expect([bare, partial, whole].map((x) => gate.admits(view, x))).toEqual([false, true, false]);
    expect(view.queued).toBe(2);
  });
});
