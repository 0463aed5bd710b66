/**
 * Property test over seeded random fleets, samples, prefix signals and configs.
 *
 * For every selection it asserts:
 *  P1 (booking) — a successful selection carries exactly one cache-aware decision
 *     (one of the four labels) and a failed one carries none; summed over the run,
 *     booked decisions = successful selections. A failure only happens on an empty
 *     pool, since the capacity fallback routes any non-empty pool.
 *  P2 (gate) — with a limit set, if the pool holds at least one worker the gate
 *     admits (unsampled, or fresh waiting < limit) that also passes capacity
 *     admission for this request, the selected worker is gate-admitted. The only
 *     permitted exception is a selection booked `all_queued`, and then it must be
 *     the saturation pin: the second tier needs every pool worker queued, so it
 *     cannot co-occur with such a worker.
 *  P3 (histogram) — divertedOverlapBlocks is present iff the decision is
 *     cache_worker_queued, and is ≥ 1; partialDiversion implies cache_hit.
 *  P4 — the selected worker belongs to the pool.
 */
import { describe, expect, it } from 'vitest';
import { CacheAwarePolicy } from '../../src/router/policies/cache-aware/cache-aware-policy.js';
import { capacityAdmits } from '../../src/router/policies/cache-aware/capacity.js';
import type { CacheAwareDecision, PolicyWorker, PrefixMatch } from '../../src/router/policies/types.js';
import { context, flat, gateAt, policyConfig, type Row, seeded, snapshot, worker } from './fixture.js';

const RUNS = 600;
const DECISIONS: readonly CacheAwareDecision[] = ['cache_hit', 'cache_miss', 'cache_worker_queued', 'all_queued'];

describe('ladder properties over random fleets', () => {
  it('books one decision per success, none per failure, and never routes onto a gated worker needlessly', () => {
    const rnd = seeded(0xc0ffee);
    const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
    const chance = (p: number) => rnd() < p;

    let successes = 0;
    let booked = 0;
    let failures = 0;
    let pinExceptions = 0;
    const seen = new Map<string, number>();

    for (let run = 0; run < RUNS; run++) {
      const n = chance(0.05) ? 0 : int(1, 12);
      const workers: PolicyWorker[] = Array.from({ length: n }, (_, i) => worker(`p${run}-${i}`, int(0, 5)));
      const rows: Row[] = [];
      for (const w of workers) {
        if (chance(0.2)) continue; // unsampled
        const capacity = chance(0.1) ? 0 : chance(0.3) ? 1_000 : 1_000_000;
        const used = capacity === 0 ? 0 : chance(0.25) ? capacity : int(0, capacity);
        rows.push([
          w,
          chance(0.1) ? 64 : int(0, 40),
          int(0, 10),
          used,
          capacity,
          {
            basicOnly: chance(0.15),
            waitingUncached: chance(0.5) ? int(0, 5000) : undefined,
            estimateMs: chance(0.3) ? int(0, 2000) : undefined,
          },
        ]);
      }
      const load = snapshot(rows, run);
      const limit = chance(0.8) ? int(1, 6) : null;
      const floor = limit !== null && chance(0.4) ? int(1, limit) : null;
      const inputTokens = int(1, 5000);

      let prefix: { queryBlocks: number; matches: PrefixMatch[] } | undefined;
      if (n > 0 && chance(0.85)) {
        const queryBlocks = chance(0.05) ? 0 : int(1, 20);
        const matches: PrefixMatch[] = [];
        for (const w of workers) if (chance(0.5)) matches.push({ worker: w, blocks: int(1, queryBlocks + 3) });
        prefix = { queryBlocks, matches };
      }

      const config = policyConfig({
        workerQueueLimit: limit,
        saturationQueueFloor: floor,
        minLoadChoices: [1, 2, 3, n + 1][int(0, 3)]!,
        cacheAffinityMinMatchedTokens: [undefined, 10, 1024][int(0, 2)],
        cacheAffinityMinMatchRatio: chance(0.2) ? rnd() : undefined,
        cacheSwitchMarginTokens: int(0, 1500),
        disablePressureGuard: !chance(0.7),
        pressureAbsThresholdTokens: int(0, 2000),
        pressureAbsThresholdMs: chance(0.3) ? int(0, 500) : undefined,
        pressureRelThreshold: 1 + rnd(),
        cacheCandidateMinWorkers: int(1, 8),
      });

      const ctx = context({ workers, load, gate: { limit, floor }, inputTokens, prefix, random: seeded(run) });
      const out = new CacheAwarePolicy(config).select(ctx);
      const o = flat(out);

      // P1
      if (out.ok) {
        successes += 1;
        expect(DECISIONS).toContain(o.decision);
        booked += 1;
        seen.set(o.decision as CacheAwareDecision, (seen.get(o.decision as CacheAwareDecision) ?? 0) + 1);
        seen.set(out.reason, (seen.get(out.reason) ?? 0) + 1);
      } else {
        failures += 1;
        expect(o).not.toHaveProperty('decision');
        expect(n).toBe(0);
        expect(out.reason).toBe('proposal_empty');
        continue;
      }

      // P4
      expect(workers).toContain(out.worker);

      // P2
      if (limit !== null) {
        const gate = gateAt(limit);
        const safeExists = workers.some((w) => gate.admits(load, w) && capacityAdmits(load, w, inputTokens));
        if (safeExists && !gate.admits(load, out.worker)) {
          expect(o.decision).toBe('all_queued');
          expect(out.reason).toBe('saturation_pin');
          pinExceptions += 1;
        }
      }

      // P3
      if (o.decision === 'cache_worker_queued') expect(o.divertedOverlapBlocks).toBeGreaterThanOrEqual(1);
      else expect(o).not.toHaveProperty('divertedOverlapBlocks');
      if (o.partialDiversion === true) expect(o.decision).toBe('cache_hit');
    }

    expect(booked).toBe(successes);
    expect(successes + failures).toBe(RUNS);
    // The run must actually exercise every decision and the interesting rungs.
    for (const label of [...DECISIONS, 'saturation_pin', 'no_cache_candidate_range_fallback']) {
      expect(seen.get(label) ?? 0, label).toBeGreaterThan(0);
    }
    expect(failures).toBeGreaterThan(0);
    expect(pinExceptions).toBeGreaterThan(0);
  });
});
