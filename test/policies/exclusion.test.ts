/**
 * A retry's selection: `exclude` in the context must make every policy behave as if
 * the excluded worker were not in the pool — same rungs, same gate tiers, same
 * admission — and must cost nothing when absent (docs/retries-and-breaker.md).
 */
import { describe, expect, it } from 'vitest';
import { CacheAwarePolicy } from '../../src/router/policies/cache-aware/cache-aware-policy.js';
import { capacityAdmits } from '../../src/router/policies/cache-aware/capacity.js';
import { PoolWithout } from '../../src/router/policies/exclusion.js';
import { PowerOfNPolicy, RandomPolicy, RoundRobinPolicy } from '../../src/router/policies/index.js';
import type { Policy, PolicyWorker, PrefixMatch, SelectionContext, SelectionOutcome } from '../../src/router/policies/types.js';
import { context, flat, gateAt, poolOf, policyConfig, type Row, seeded, signal, snapshot, worker } from './fixture.js';

const POLICIES: ReadonlyArray<readonly [string, () => Policy]> = [
  ['round_robin', () => new RoundRobinPolicy()],
  ['random', () => new RandomPolicy()],
  ['power_of_n k=2', () => new PowerOfNPolicy(2)],
  ['power_of_n k=5', () => new PowerOfNPolicy(5)],
  ['cache_aware', () => new CacheAwarePolicy(policyConfig({ cacheAffinityMinMatchedTokens: 10 }))],
  ['cache_aware gated', () => new CacheAwarePolicy(policyConfig({ cacheAffinityMinMatchedTokens: 10, workerQueueLimit: 3 }))],
  [
    'cache_aware floor',
    () => new CacheAwarePolicy(policyConfig({ cacheAffinityMinMatchedTokens: 10, workerQueueLimit: 3, saturationQueueFloor: 2 })),
  ],
];

/** Everything an outcome says, minus the sampled log flag (a retry never ticks it). */
function comparable(o: SelectionOutcome): unknown {
  const { inertWarning: _drop, ...rest } = flat(o);
  return rest;
}

describe('PoolWithout', () => {
  const [a, b, c, d] = [worker('ex-a'), worker('ex-b'), worker('ex-c'), worker('ex-d')];
  const load = snapshot([
    [a, 0, 1, 0, 1000], // below the floor
    [b, 0, 6, 0, 1000], // queued (limit 3)
    [c, 0, 2, 0, 1000], // fresh, unqueued, not below the floor
    // d: unsampled
  ]);
  const gate = { limit: 3, floor: 2 };
  const pool = poolOf([a, b, c, d], load, gate);

  it('is free on a first selection: the same pool object, nothing copied', () => {
    const view = new PoolWithout();
    expect(view.over(pool, load, undefined, gate.floor)).toBe(pool);
  });

  it('returns the pool itself when the excluded worker is not a member (its breaker took it out)', () => {
    const view = new PoolWithout();
    expect(view.over(pool, load, worker('ex-elsewhere'), gate.floor)).toBe(pool);
  });

  it.each([
    ['below the floor', a],
    ['queued', b],
    ['fresh and unqueued', c],
    ['unsampled', d],
  ])('hides a worker that is %s, with counters as if it never was a member', (_name, w) => {
    const view = new PoolWithout().over(pool, load, w, gate.floor);
    const rebuilt = poolOf(
      [a, b, c, d].filter((x) => x !== w),
      load,
      gate,
    );
    expect({ ...view, workers: [...view.workers], unqueued: [...view.unqueued] }).toEqual({
      workers: rebuilt.workers,
      unqueued: rebuilt.unqueued,
      sampled: rebuilt.sampled,
      queued: rebuilt.queued,
      belowFloor: rebuilt.belowFloor,
    });
    expect(view.workers).not.toContain(w);
  });

  it('refills the same arrays on every retry: no new backing store per use', () => {
    const pw = new PoolWithout();
    const first = pw.over(pool, load, a, gate.floor);
    const workers = first.workers;
    const unqueued = first.unqueued;
    const second = pw.over(pool, load, c, gate.floor);
    expect(second.workers).toBe(workers);
    expect(second.unqueued).toBe(unqueued);
    expect([...second.workers]).toEqual([a, b, d]);
  });
});

describe('every policy honours exclude', () => {
  const ws = [worker('hx-0'), worker('hx-1'), worker('hx-2'), worker('hx-3')];
  const load = snapshot([
    [ws[0]!, 0, 0, 0, 100_000],
    [ws[1]!, 0, 0, 0, 100_000],
    [ws[2]!, 1, 9, 0, 100_000],
    [ws[3]!, 2, 1, 0, 100_000],
  ]);

  it.each(POLICIES)('%s never returns the excluded worker', (_name, make) => {
    for (const excluded of ws) {
      const policy = make();
      for (let seed = 0; seed < 40; seed++) {
        const ctx: SelectionContext = {
          ...context({ workers: ws, load, gate: { limit: 3 }, prefix: signal(4, [[excluded, 4]]), random: seeded(seed) }),
          exclude: excluded,
        };
        const out = policy.select(ctx);
        expect(out.ok).toBe(true);
        if (out.ok) expect(out.worker).not.toBe(excluded);
      }
    }
  });

  it.each(POLICIES)('%s fails cleanly when the excluded worker was the whole pool', (_name, make) => {
    const only = ws[0]!;
    const out = make().select({ ...context({ workers: [only], load, prefix: signal(4, [[only, 4]]) }), exclude: only });
    expect(out).toMatchObject({ ok: false, reason: 'proposal_empty' });
  });
});

describe('cache_aware retry after the owner failed', () => {
  it('skips a gated co-owner for an unqueued, admitted worker: the gate tiers of a first pass', () => {
    const [owner, gated, idle] = [worker('rt-owner'), worker('rt-gated'), worker('rt-idle')];
    const load = snapshot([
      [owner, 0, 0, 0, 100_000],
      [gated, 0, 5, 0, 100_000],
      [idle, 0, 0, 0, 100_000],
    ]);
    const policy = new CacheAwarePolicy(policyConfig({ cacheAffinityMinMatchedTokens: 10, workerQueueLimit: 3 }));
    const base = context({
      workers: [owner, gated, idle],
      load,
      gate: { limit: 3 },
      prefix: signal(6, [
        [owner, 6],
        [gated, 6],
      ]),
    });
    const first = policy.select(base);
    expect(flat(first)).toMatchObject({ ok: true, worker: owner, decision: 'cache_hit' });
    const retry = policy.select({ ...base, exclude: owner });
    expect(flat(retry)).toMatchObject({ ok: true, worker: idle, decision: 'cache_worker_queued', gateRejected: [gated] });
  });

  it('keeps a gated worker when every other worker is queued too (the second tier, over the pool without the owner)', () => {
    const [owner, g1, g2] = [worker('rt2-owner'), worker('rt2-g1'), worker('rt2-g2')];
    const load = snapshot([
      [owner, 0, 0, 0, 100_000],
      [g1, 0, 5, 0, 100_000],
      [g2, 0, 7, 0, 100_000],
    ]);
    const policy = new CacheAwarePolicy(policyConfig({ cacheAffinityMinMatchedTokens: 10, workerQueueLimit: 3 }));
    const ctx = context({
      workers: [owner, g1, g2],
      load,
      gate: { limit: 3 },
      prefix: signal(6, [
        [owner, 6],
        [g2, 3],
      ]),
    });
    // With the owner gone the whole remaining pool is queued: the gate falls back and keeps affinity.
    expect(flat(policy.select({ ...ctx, exclude: owner }))).toMatchObject({ ok: true, worker: g2, decision: 'all_queued' });
  });
});

describe('exclude is exactly "not in the pool" (property, seeded random fleets)', () => {
  it.each(POLICIES)('%s: selecting with exclude equals selecting over the pool rebuilt without the worker', (_name, make) => {
    const rnd = seeded(0xe1c1);
    const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
    const chance = (p: number) => rnd() < p;
    for (let run = 0; run < 300; run++) {
      const n = int(1, 10);
      const workers: PolicyWorker[] = Array.from({ length: n }, (_, i) => worker(`eq${run}-${i}`, int(0, 5)));
      const rows: Row[] = [];
      for (const w of workers) {
        if (chance(0.2)) continue;
        const capacity = chance(0.3) ? 1_000 : 1_000_000;
        rows.push([
          w,
          chance(0.1) ? 64 : int(0, 40),
          int(0, 8),
          int(0, capacity),
          capacity,
          { estimateMs: chance(0.3) ? int(0, 900) : undefined },
        ]);
      }
      const load = snapshot(rows, run);
      const queryBlocks = int(1, 12);
      const matches: PrefixMatch[] = [];
      for (const w of workers) if (chance(0.5)) matches.push({ worker: w, blocks: int(1, queryBlocks) });
      const excluded = workers[int(0, n - 1)]!;
      const inputTokens = int(20, 4000);
      // Policies read the gate from their own config; the pool's counters follow it.
      const probe = make();
      const config = probe instanceof CacheAwarePolicy ? probe.config : undefined;
      const effectiveGate = { limit: config?.gate.limit, floor: config?.gate.floor };

      const withExclude = make().select({
        ...context({ workers, load, gate: effectiveGate, inputTokens, prefix: { queryBlocks, matches }, random: seeded(run) }),
        exclude: excluded,
      });
      const rebuilt = make().select(
        context({
          workers: workers.filter((w) => w !== excluded),
          load,
          gate: effectiveGate,
          inputTokens,
          prefix: { queryBlocks, matches: matches.filter((m) => m.worker !== excluded) },
          random: seeded(run),
        }),
      );
      expect(comparable(withExclude), `run ${run}`).toEqual(comparable(rebuilt));
      if (withExclude.ok && config !== undefined && config.gate.limit !== null) {
        // The gate property of a first pass (property.test.ts P2), over the pool without the worker.
        const gate = gateAt(config.gate.limit);
        const safeExists = workers.some((w) => w !== excluded && gate.admits(load, w) && capacityAdmits(load, w, inputTokens));
        if (safeExists && !gate.admits(load, withExclude.worker)) expect(withExclude.reason).toBe('saturation_pin');
      }
    }
  });
});
