/**
 * Pressure comparison (docs/routing.md §Pressure ranking), the queue gate boundary
 * (docs/routing.md §Queue gate) and the tournament's margin and guard
 * (docs/routing.md §Switch margin, §Pressure guard).
 */
import { describe, expect, it } from 'vitest';
import {
  comparePairwise,
  comparePressure,
  comparePrefillLoad,
  lookupOver,
  materiallyMorePressured,
  totalCmp,
  workerOfSelf,
} from '../../src/router/policies/cache-aware/pressure.js';
import { resolveCacheCandidates } from '../../src/router/policies/cache-aware/resolve-cache-candidates.js';
import type { NativeLoad } from '../../src/router/policies/types.js';
import { DecisionReason } from '../../src/router/policies/cache-aware/decision.js';
import { resolvePrefillAdmitted } from '../../src/router/policies/cache-aware/prefill-admission.js';
import { candidate, EMPTY_LOAD, gateAt, INPUT_TOKENS, pair, poolOf, proposal, snapshot, worker } from './fixture.js';

const ROOM = 1_000_000;

function native(waitingUncachedTokens: number, estimatedPrefillQueueMs?: number, waiting = 0, running = 0): NativeLoad {
  return {
    running,
    waiting,
    usedTokens: 0,
    maxTotalTokens: ROOM,
    capturedAt: 0,
    waitingUncachedTokens,
    totalTokens: 0,
    maxRunningRequests: 64,
    estimatedPrefillQueueMs,
  };
}

describe('queue gate', () => {
  it.each([
    [undefined, 100, true],
    [4, 3, true],
    [4, 4, false],
    [4, 5, false],
    [1, 0, true],
  ])('limit %s, waiting %i admits: %s', (limit, waiting, want) => {
    const w = worker('g');
    expect(gateAt(limit).admits(snapshot([[w, 0, waiting, 0, ROOM]]), w)).toBe(want);
  });

  it('fails open without a fresh sample, and a basic-only sample still gates', () => {
    const w = worker('g');
    expect(gateAt(1).admits(EMPTY_LOAD, w)).toBe(true);
    expect(gateAt(4).admits(snapshot([[w, 0, 9, 0, ROOM, { basicOnly: true }]]), w)).toBe(false);
  });

  it('knows the pool is all queued from its counters alone', () => {
    const a = worker('a');
    const b = worker('b');
    const both = snapshot([
      [a, 0, 4, 0, ROOM],
      [b, 0, 7, 0, ROOM],
    ]);
    expect(gateAt(4).allQueued(poolOf([a, b], both, { limit: 4 }))).toBe(true);
    expect(gateAt(null).allQueued(poolOf([a, b], both))).toBe(false);
    expect(gateAt(4).allQueued(poolOf([], both, { limit: 4 }))).toBe(false);
    expect(gateAt(4).allQueued(poolOf([a, b], snapshot([[a, 0, 9, 0, ROOM]]), { limit: 4 }))).toBe(false);
  });
});

describe('prefill pressure', () => {
  it('compares estimates first when both have one, then the queue tuple', () => {
    expect(comparePrefillLoad(native(10, 500), native(1000, 50))).toBeGreaterThan(0);
    expect(comparePrefillLoad(native(10, 500), native(1000))).toBeLessThan(0);
    expect(comparePrefillLoad(native(10, 50, 1), native(10, 50, 2))).toBeLessThan(0);
    expect(comparePrefillLoad(native(10, 50, 2, 1), native(10, 50, 2, 3))).toBeLessThan(0);
  });

  it('orders floats totally', () => {
    expect(totalCmp(1, 2)).toBe(-1);
    expect(totalCmp(-0, 0)).toBe(-1);
    expect(totalCmp(Number.NaN, Number.POSITIVE_INFINITY)).toBe(1);
    expect(totalCmp(Number.NaN, Number.NaN)).toBe(0);
  });

  it('lookup mode is all-or-nothing over the set; pairwise mode is per pair', () => {
    const calm = worker('calm', 9);
    const busy = worker('busy', 0);
    const silent = worker('silent', 1);
    const load = snapshot([
      [calm, 0, 0, 0, ROOM],
      [busy, 0, 50, 0, ROOM],
    ]);
    const withSilent = lookupOver(load, [calm, busy, silent], workerOfSelf);
    expect(withSilent.compareEngine).toBe(false);
    // Router-local: the engine-calm worker has more in flight, so it ranks after.
    expect(comparePressure(withSilent, calm, busy)).toBeGreaterThan(0);
    const engine = lookupOver(load, [calm, busy], workerOfSelf);
    expect(engine.source).toBe('native_queue_tokens');
    expect(comparePressure(engine, calm, busy)).toBeLessThan(0);
    expect(comparePairwise(load, calm, busy)).toBeLessThan(0);
    expect(comparePairwise(load, calm, silent)).toBeGreaterThan(0);
    expect(lookupOver(load, [], workerOfSelf).source).toBe('router_local');
    const est = snapshot([[calm, 0, 0, 0, ROOM, { estimateMs: 3 }]]);
    expect(lookupOver(est, [calm], workerOfSelf).source).toBe('estimated_prefill_queue_ms');
  });

  it('materially more pressured needs both the absolute and the relative margin', () => {
    const t = { absTokens: 100, absMs: null, rel: 1.5 };
    expect(materiallyMorePressured(native(1000), native(10), t)).toBe(true);
    expect(materiallyMorePressured(native(150), native(10), t)).toBe(true);
    expect(materiallyMorePressured(native(100), native(0), t)).toBe(false); // abs not exceeded
    expect(materiallyMorePressured(native(1100), native(900), t)).toBe(false); // rel not exceeded
    expect(materiallyMorePressured(native(10), native(1000), t)).toBe(false);
  });

  it('uses the ms rule when configured and both have estimates, else the token rule', () => {
    const t = { absTokens: 100, absMs: 50, rel: 1.5 };
    expect(materiallyMorePressured(native(0, 200), native(5000, 10), t)).toBe(true);
    expect(materiallyMorePressured(native(5000, 20), native(0, 10), t)).toBe(false);
    expect(materiallyMorePressured(native(5000), native(0, 10), t)).toBe(true);
  });
});

describe('tournament', () => {
  const a = worker('t-a');
  const b = worker('t-b');
  const load = snapshot([
    [a, 0, 900, 0, ROOM],
    [b, 0, 0, 0, ROOM],
  ]);
  const pool = poolOf([a, b], load);
  const guard = { enabled: true, absTokens: 100, absMs: null, rel: 1.5 };

  it('a candidate beyond the switch margin cannot win on pressure', () => {
    const r = resolveCacheCandidates(
      proposal([candidate(a, 10, 9), candidate(b, 60, 4)], { switchMarginTokens: 20, guard }),
      INPUT_TOKENS,
      load,
      pool,
    );
    expect(r.decision?.selected).toBe(a);
    expect(r.audit.pressureGuardComparedPairs).toBe(0);
  });

  it('inside the margin without the guard, cache work decides; with it, pressure may override', () => {
    const cands = [candidate(a, 10, 9), candidate(b, 60, 4)];
    const off = resolveCacheCandidates(proposal(cands, { switchMarginTokens: 100 }), INPUT_TOKENS, load, pool);
    expect(off.decision?.selected).toBe(a);
    const on = resolveCacheCandidates(proposal(cands, { switchMarginTokens: 100, guard }), INPUT_TOKENS, load, pool);
    expect(on.decision?.selected).toBe(b);
    expect(on.audit).toMatchObject({ pressureGuardComparedPairs: 1, pressureGuardOverrides: 1 });
  });

  it('the guard does not run when an evaluated candidate lacks native data', () => {
    const silent = worker('t-silent');
    const r = resolveCacheCandidates(
      proposal([candidate(a, 10, 9), candidate(b, 60, 4), candidate(silent, 90, 1)], { switchMarginTokens: 100, guard }),
      INPUT_TOKENS,
      load,
      poolOf([a, b, silent], load),
    );
    expect(r.decision?.selected).toBe(a);
    expect(r.audit.prefillPressureSource).toBe('router_local');
    expect(r.audit.pressureGuardComparedPairs).toBe(0);
  });

  it('a gated-out owner without native data does not downgrade the evaluated set to router-local', () => {
    const gatedBasic = worker('t-gated');
    const engineBusy = worker('t-engine-busy', 0);
    const engineCalm = worker('t-engine-calm', 5);
    const mixed = snapshot([
      [gatedBasic, 0, 9, 0, ROOM, { basicOnly: true }],
      [engineBusy, 0, 3, 0, ROOM, { waitingUncached: 900 }],
      [engineCalm, 0, 0, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(gatedBasic, 5, 9), candidate(engineBusy, 10, 8), candidate(engineCalm, 10, 8)], {
        workerQueueLimit: 4,
      }),
      INPUT_TOKENS,
      mixed,
      poolOf([gatedBasic, engineBusy, engineCalm], mixed, { limit: 4 }),
    );
    expect(r.audit.queueGateRejected).toBe(1);
    expect(r.audit.prefillPressureSource).toBe('native_queue_tokens');
    // Router-local counts would have picked the engine-busy worker (0 in flight).
    expect(r.decision?.selected).toBe(engineCalm);
  });

  it('equal uncached work falls to pressure, then id', () => {
    const r = resolveCacheCandidates(proposal([candidate(a, 10, 9), candidate(b, 10, 9)]), INPUT_TOKENS, load, pool);
    expect(r.decision?.selected).toBe(b);
    const tie = snapshot([
      [a, 0, 0, 0, ROOM],
      [b, 0, 0, 0, ROOM],
    ]);
    const s = resolveCacheCandidates(proposal([candidate(b, 10, 9), candidate(a, 10, 9)]), INPUT_TOKENS, tie, poolOf([a, b], tie));
    expect(s.decision?.selected).toBe(a);
  });
});

/**
 * Capacity fields hold under any engine schedule policy; only the uncached-token
 * comparisons need a cache-aware one (docs/engine-load.md, "Capacity and pressure").
 */
describe('a non cache-aware (fcfs) engine: capacity admission yes, uncached-token pressure no', () => {
  const guard = { enabled: true, absTokens: 100, absMs: null, rel: 1.5 };

  it('capacity admission rejects a full fcfs worker, running cap and KV alike', () => {
    const kvFull = worker('fcfs-kv-full');
    const slotsFull = worker('fcfs-slots-full');
    const roomy = worker('fcfs-roomy');
    const load = snapshot([
      [kvFull, 0, 0, 950, 1000, { fcfs: true }],
      [slotsFull, 64, 0, 0, ROOM, { fcfs: true }],
      [roomy, 0, 0, 0, ROOM, { fcfs: true }],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(kvFull, 10, 9), candidate(slotsFull, 20, 8), candidate(roomy, 90, 1)]),
      INPUT_TOKENS,
      load,
      poolOf([kvFull, slotsFull, roomy], load),
    );
    expect(r.audit).toMatchObject({ admissionEvaluated: 3, admissionRejected: 2 });
    expect(r.decision?.selected).toBe(roomy);
  });

  it('the guard does not run on fcfs data, and the comparison source is router-local', () => {
    const a = worker('fcfs-a', 0);
    const b = worker('fcfs-b', 3);
    // On trusted data b would win by pressure (a has 900 waiting uncached tokens).
    const trusted = snapshot([
      [a, 0, 900, 0, ROOM],
      [b, 0, 0, 0, ROOM],
    ]);
    const fcfs = snapshot([
      [a, 0, 900, 0, ROOM, { fcfs: true }],
      [b, 0, 0, 0, ROOM, { fcfs: true }],
    ]);
    const cands = [candidate(a, 10, 9), candidate(b, 60, 4)];
    const on = resolveCacheCandidates(proposal(cands, { switchMarginTokens: 100, guard }), INPUT_TOKENS, trusted, poolOf([a, b], trusted));
    expect(on.decision?.selected).toBe(b);
    const off = resolveCacheCandidates(proposal(cands, { switchMarginTokens: 100, guard }), INPUT_TOKENS, fcfs, poolOf([a, b], fcfs));
    expect(off.decision?.selected).toBe(a);
    expect(off.audit).toMatchObject({ prefillPressureSource: 'router_local', pressureGuardComparedPairs: 0, pressureGuardOverrides: 0 });
  });

  it('lookup, pairwise and the materially-more-pressured rule ignore fcfs uncached tokens', () => {
    const calm = worker('fcfs-calm', 9);
    const busy = worker('fcfs-busy', 0);
    const load = snapshot([
      [calm, 0, 0, 0, ROOM, { fcfs: true }],
      [busy, 0, 50, 0, ROOM, { fcfs: true }],
    ]);
    expect(lookupOver(load, [calm, busy], workerOfSelf).source).toBe('router_local');
    // Router-local: the engine-calm worker has more in flight.
    expect(comparePairwise(load, calm, busy)).toBeGreaterThan(0);
    const t = { absTokens: 10, absMs: null, rel: 1.1 };
    expect(materiallyMorePressured(load.native(busy)!, load.native(calm)!, t)).toBe(false);
    expect(materiallyMorePressured(native(1000), native(0), t)).toBe(true);
  });

  it('a pair: the fcfs primary full of KV is not admitted, and no pressure-guard backup on fcfs data', () => {
    const primary = worker('fcfs-primary');
    const backup = worker('fcfs-backup');
    const full = snapshot([
      [primary, 0, 0, 990, 1000, { fcfs: true }],
      [backup, 0, 0, 0, 1000, { fcfs: true }],
    ]);
    expect(resolvePrefillAdmitted([primary, backup], pair(primary, backup), INPUT_TOKENS, full, gateAt(null))).toMatchObject({
      selected: backup,
      reason: DecisionReason.BackupPrimaryAdmission,
    });
    const pressured = snapshot([
      [primary, 0, 1000, 0, ROOM, { fcfs: true }],
      [backup, 0, 10, 0, ROOM, { fcfs: true }],
    ]);
    expect(resolvePrefillAdmitted([primary, backup], pair(primary, backup, guard), INPUT_TOKENS, pressured, gateAt(null))).toMatchObject({
      selected: primary,
      reason: DecisionReason.Primary,
    });
  });
});
