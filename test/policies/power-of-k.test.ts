/**
 * Ports of the reference power_of_two.rs tests against the pair proposal
 * (docs/routing.md §Pair fallback), plus the pinned tie rule at k ≥ pool size.
 */
import { describe, expect, it, vi } from 'vitest';
import { CacheAwarePolicy } from '../../src/router/policies/cache-aware/cache-aware-policy.js';
import { cacheAwareConfig } from '../../src/router/policies/cache-aware/config.js';
import { proposePair, scanPowerOfK } from '../../src/router/policies/cache-aware/pair-proposal.js';
import { comparePairwise } from '../../src/router/policies/cache-aware/pressure.js';
import type { PolicyWorker } from '../../src/router/policies/types.js';
import { context, gateAt, poolOf, type Row, scripted, seeded, snapshot, worker } from './fixture.js';

const ROOM = 1_000_000;

/** n workers whose pressure (waiting) is given by `waiting(i)`. */
function fleet(n: number, waiting: (i: number) => number, prefix = 'w') {
  const workers = Array.from({ length: n }, (_, i) => worker(`${prefix}${i}`));
  const rows: Row[] = workers.map((w, i) => [w, 0, waiting(i), 0, ROOM]);
  return { workers, load: snapshot(rows) };
}

describe('power-of-k pair proposal (reference power_of_two.rs tests)', () => {
  it.each([2, 3, 21, 32, 64, 128])('a_large_sample_over_mixed_estimates_never_aborts (k = %i)', (k) => {
    const workers = Array.from({ length: 64 }, (_, i) => worker(`mixed${i}`, i % 5));
    const rows: Row[] = [];
    workers.forEach((w, i) => {
      switch (i % 4) {
        case 0:
          return; // unsampled: router-local only
        case 1:
          return void rows.push([w, i % 7, i % 11, 0, ROOM, { basicOnly: true }]);
        case 2:
          return void rows.push([w, i % 7, i % 11, 0, ROOM]);
        default:
          return void rows.push([w, i % 7, i % 11, 0, ROOM, { estimateMs: (i * 37) % 101 }]);
      }
    });
    const load = snapshot(rows);
    const pool = poolOf(workers, load);
    for (let seed = 0; seed < 50; seed++) {
      const p = proposePair(pool, load, gateAt(null), k, seeded(seed));
      expect(p).toBeDefined();
      expect(workers).toContain(p?.primary);
      expect(workers).toContain(p?.backup);
      expect(p?.backup).not.toBe(p?.primary);
      // Only a strict improvement displaces: the primary never loses to its runner-up.
      expect(comparePairwise(load, p!.primary, p!.backup!)).toBeLessThanOrEqual(0);
    }
  });

  it('propose_and_select_agree_on_the_sample_minimum', () => {
    const { workers, load } = fleet(9, (i) => (i * 5) % 9);
    const pool = poolOf(workers, load);
    const policy = new CacheAwarePolicy(cacheAwareConfig({ minLoadChoices: 3 }));
    for (let seed = 0; seed < 64; seed++) {
      const p = proposePair(pool, load, gateAt(null), 3, seeded(seed));
      const s = policy.select(context({ workers, load, random: seeded(seed) }));
      expect(s.ok && s.worker).toBe(p?.primary);
      expect(s.ok && s.reason).toBe('no_cache_candidate');
      expect(s.ok && s.backup).toBe(p?.backup);
      expect(comparePairwise(load, p!.primary, p!.backup!)).toBeLessThan(0);
    }
  });

  it('one_choice_proposes_no_backup', () => {
    const { workers, load } = fleet(5, (i) => i);
    for (let seed = 0; seed < 16; seed++) {
      const p = proposePair(poolOf(workers, load), load, gateAt(null), 1, seeded(seed));
      expect(p?.primary).toBeDefined();
      expect(p?.backup).toBeUndefined();
    }
  });

  it('sample_never_lands_on_a_queueing_worker_while_an_unqueued_one_exists', () => {
    // The queueing workers look calmest on pressure; only the tier keeps them out.
    const workers = Array.from({ length: 8 }, (_, i) => worker(`q${i}`));
    const rows: Row[] = workers.map((w, i) =>
      i === 5 ? [w, 0, 3, 0, ROOM, { waitingUncached: 5000 }] : [w, 0, 4 + i, 0, ROOM, { waitingUncached: 0 }],
    );
    const load = snapshot(rows);
    const pool = poolOf(workers, load, { limit: 4 });
    expect(pool.unqueued).toEqual([workers[5]]);
    for (const k of [1, 2, 3, 8]) {
      for (let seed = 0; seed < 64; seed++) {
        const p = proposePair(pool, load, gateAt(4), k, seeded(seed));
        expect(p?.primary).toBe(workers[5]);
        expect(p?.backup).toBeUndefined();
      }
    }
  });

  it('all_queueing_fleet_still_selects_from_the_whole_pool', () => {
    const { workers, load } = fleet(6, (i) => 10 - i);
    const pool = poolOf(workers, load, { limit: 4 });
    expect(pool.unqueued).toEqual([]);
    const exact = proposePair(pool, load, gateAt(4), 6, seeded(3));
    expect(exact?.primary).toBe(workers[5]);
    expect(exact?.backup).toBe(workers[4]);
    const seen = new Set<PolicyWorker>();
    for (let seed = 0; seed < 128; seed++) {
      const p = proposePair(pool, load, gateAt(4), 2, seeded(seed));
      expect(workers).toContain(p?.primary);
      seen.add(p!.primary);
    }
    // Drawn from everywhere, not a fixed corner of the pool.
    expect(seen.size).toBeGreaterThanOrEqual(4);
  });

  it('choices_at_or_above_the_pool_size_returns_the_exact_minimum', () => {
    const { workers, load } = fleet(5, (i) => [7, 3, 9, 1, 4][i]!);
    for (const k of [5, 6, 100]) {
      const random = vi.fn(seeded(11));
      const p = proposePair(poolOf(workers, load), load, gateAt(null), k, random);
      expect(p?.primary).toBe(workers[3]);
      expect(p?.backup).toBe(workers[1]);
      // Deterministic: the whole pool is scanned, nothing is drawn.
      expect(random).not.toHaveBeenCalled();
    }
  });

  it('ties at k ≥ pool size keep pool order (pinned tie rule)', () => {
    const { workers, load } = fleet(4, (i) => (i === 0 ? 9 : 2));
    for (let seed = 0; seed < 16; seed++) {
      const p = proposePair(poolOf(workers, load), load, gateAt(null), 4, seeded(seed));
      expect(p?.primary).toBe(workers[1]);
      expect(p?.backup).toBe(workers[2]);
    }
  });

  it('one_choice_draws_within_the_tier_and_ignores_pressure', () => {
    const { workers, load } = fleet(4, (i) => i * 100);
    const pool = poolOf(workers, load);
    expect(proposePair(pool, load, gateAt(null), 1, scripted(0.99))?.primary).toBe(workers[3]);
    expect(proposePair(pool, load, gateAt(null), 1, scripted(0))?.primary).toBe(workers[0]);
    expect(proposePair(pool, load, gateAt(null), 1, scripted(0.5))?.primary).toBe(workers[2]);
    // A source that returns exactly 1 must not index past the tier.
    expect(proposePair(pool, load, gateAt(null), 1, scripted(1))?.primary).toBe(workers[3]);
  });

  it('one_choice_stays_inside_the_queue_gate_tier', () => {
    const { workers, load } = fleet(10, (i) => (i % 3 === 0 ? 2 : 8));
    const pool = poolOf(workers, load, { limit: 4 });
    const tier = workers.filter((_, i) => i % 3 === 0);
    expect(pool.unqueued).toEqual(tier);
    for (let seed = 0; seed < 64; seed++) {
      expect(tier).toContain(proposePair(pool, load, gateAt(4), 1, seeded(seed))?.primary);
    }
  });

  it('two_workers_with_defaults_propose_both_ordered_by_pressure', () => {
    const calm = worker('calm');
    const busy = worker('busy');
    const load = snapshot([
      [busy, 0, 6, 0, ROOM],
      [calm, 0, 1, 0, ROOM],
    ]);
    const k = cacheAwareConfig().minLoadChoices;
    for (const order of [
      [busy, calm],
      [calm, busy],
    ]) {
      const p = proposePair(poolOf(order, load), load, gateAt(null), k, seeded(5));
      expect(p?.primary).toBe(calm);
      expect(p?.backup).toBe(busy);
    }
  });

  it('proposal_primary_respects_the_queue_gate_tier', () => {
    const queued = worker('queued');
    const unqueued = worker('unqueued');
    const load = snapshot([
      [queued, 0, 4, 0, ROOM, { waitingUncached: 0 }],
      [unqueued, 0, 3, 0, ROOM, { waitingUncached: 900 }],
    ]);
    const p = proposePair(poolOf([queued, unqueued], load, { limit: 4 }), load, gateAt(4), 2, seeded(1));
    expect(p?.primary).toBe(unqueued);
    // Without the gate the calmer, queueing worker would lead.
    const q = proposePair(poolOf([queued, unqueued], load), load, gateAt(null), 2, seeded(1));
    expect(q?.primary).toBe(queued);
  });

  it('a sample smaller than the pool is uniform and its order is shuffled', () => {
    // Equal pressure: the primary is the first-drawn member, so it exposes the draw order.
    const { workers, load } = fleet(4, () => 1);
    for (const k of [2, 3]) {
      const counts = new Map<PolicyWorker, number>();
      const random = seeded(2024 + k);
      let repeated = 0;
      for (let i = 0; i < 8000; i++) {
        const s = scanPowerOfK(workers, load, k, random)!;
        counts.set(s.best, (counts.get(s.best) ?? 0) + 1);
        if (s.runnerUp === s.best || s.runnerUp === undefined) repeated += 1;
      }
      expect(repeated).toBe(0);
      for (const w of workers) expect(counts.get(w)! / 8000).toBeCloseTo(0.25, 1);
    }
  });
});
