/**
 * Ports of the pure parts of the reference selection.rs tests: the decision mapping
 * (docs/routing.md §Pinned decision examples), the label mapping
 * (docs/routing.md §Policy decision reasons), and the ladder's booking through
 * CacheAwarePolicy.select. The router books metrics from the outcome, so "books X"
 * here means "the outcome carries exactly decision X".
 */
import { describe, expect, it } from 'vitest';
import { CacheAwarePolicy } from '../../src/router/policies/cache-aware/cache-aware-policy.js';
import { cacheAwareConfig } from '../../src/router/policies/cache-aware/config.js';
import {
  cacheAwareFallbackDecision,
  cacheAwareReasonLabel,
  cacheWinnerDecision,
  DecisionReason,
  type ProposalKind,
} from '../../src/router/policies/cache-aware/decision.js';
import { context, flat, policyConfig, seeded, signal, snapshot, worker } from './fixture.js';

const BIG_INPUT = 100_000;
const ROOM = 10_000_000;

describe('cache_aware_fallback_decision', () => {
  it.each([
    [1, 3, false, 'cache_miss'],
    [0, 0, false, 'cache_miss'],
    [0, 4, true, 'cache_miss'],
  ] as const)('cache_aware_fallback_decision_needs_the_gate_to_have_emptied_the_set (%i, %i, %s)', (r, e, q, want) => {
    expect(cacheAwareFallbackDecision(r, e, q)).toBe(want);
  });

  it.each([
    [2, 0, false, 'cache_worker_queued'],
    [2, 2, true, 'all_queued'],
  ] as const)('cache_aware_fallback_decision_separates_diversion_from_saturation (%i, %i, %s)', (r, e, q, want) => {
    expect(cacheAwareFallbackDecision(r, e, q)).toBe(want);
  });

  it('asks fleet saturation before capacity', () => {
    // (2,0,true) cannot come out of the resolver without a floor, but with a floor it
    // can, and the mapping must still say all_queued rather than a diversion.
    expect(cacheAwareFallbackDecision(2, 0, true)).toBe('all_queued');
  });

  it.each([
    [DecisionReason.CacheCandidate, false, 'cache_hit'],
    [DecisionReason.CacheCandidate, true, 'all_queued'],
    [DecisionReason.SaturationPin, false, 'all_queued'],
  ] as const)('a cache winner with reason %s and fell-back %s books %s', (reason, fellBack, want) => {
    expect(cacheWinnerDecision(reason, fellBack)).toBe(want);
  });
});

describe('policy decision labels (docs/routing.md §Policy decision reasons)', () => {
  it.each([
    [DecisionReason.CacheCandidate, 'cache_candidates', 'cache_candidate'],
    [DecisionReason.Primary, 'cache_affinity', 'cache_candidate'],
    [DecisionReason.SaturationPin, 'cache_candidates', 'saturation_pin'],
    [DecisionReason.Primary, 'pair', 'no_cache_candidate'],
    [DecisionReason.BackupPrimaryAdmission, 'pair', 'no_cache_candidate_admission_backup'],
    [DecisionReason.BackupPressureGuard, 'pair', 'no_cache_candidate_pressure_backup'],
    [DecisionReason.RangeFallback, 'pair', 'no_cache_candidate_range_fallback'],
    [DecisionReason.CapacityFallbackPowerOfTwo, 'pair', 'no_cache_candidate_capacity_fallback_power_of_two'],
  ] as const)('%s on a %s proposal is labelled %s', (reason, kind: ProposalKind, label) => {
    expect(cacheAwareReasonLabel(reason, kind)).toBe(label);
  });

  it('cache_no_winner_p2_is_distinct_from_cache_candidate', () => {
    expect(cacheAwareReasonLabel(DecisionReason.Primary, 'pair')).not.toBe(
      cacheAwareReasonLabel(DecisionReason.CacheCandidate, 'cache_candidates'),
    );
  });
});

describe('the ladder (reference selection.rs tests)', () => {
  it('an_empty_fleet_reports_the_proposal_empty_failure', () => {
    const policy = new CacheAwarePolicy(policyConfig({ workerQueueLimit: 4 }));
    expect(policy.select(context({ workers: [] }))).toEqual({ ok: false, reason: 'proposal_empty' });
  });

  it('a_failed_cache_aware_selection_books_no_decision', () => {
    const ghost = worker('ghost');
    const policy = new CacheAwarePolicy(policyConfig({ workerQueueLimit: 4 }));
    // Even with a prefix signal in hand, an empty pool resolves nothing and books nothing.
    const out = policy.select(context({ workers: [], prefix: signal(10, [[ghost, 9]]), inputTokens: BIG_INPUT }));
    expect(out.ok).toBe(false);
    expect(out).not.toHaveProperty('decision');
    expect(out).not.toHaveProperty('divertedOverlapBlocks');
  });

  it('a_saturated_capacity_exhausted_fleet_books_all_queued_through_the_ladder', () => {
    const owner = worker('owner');
    const shallow = worker('shallow');
    const load = snapshot([
      [owner, 0, 9, 1000, 1000],
      [shallow, 0, 5, 1000, 1000],
    ]);
    const policy = new CacheAwarePolicy(policyConfig({ workerQueueLimit: 4 }));
    const out = policy.select(
      context({
        workers: [owner, shallow],
        load,
        gate: { limit: 4 },
        inputTokens: BIG_INPUT,
        prefix: signal(10, [
          [owner, 9],
          [shallow, 4],
        ]),
      }),
    );
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.cacheAware?.decision).toBe('all_queued');
    expect(out.reason).toBe('no_cache_candidate_capacity_fallback_power_of_two');
    expect(out.cacheAware?.divertedOverlapBlocks).toBeUndefined();
    expect(out.cacheAware?.resolution).toMatchObject({ queueGateRejected: 2, admissionEvaluated: 2, fleetAllQueued: true });
  });

  it('a_real_diversion_books_cache_worker_queued_and_its_overlap_depth', () => {
    const owner = worker('owner');
    const idle = worker('idle');
    const load = snapshot([
      [owner, 0, 9, 0, ROOM],
      [idle, 0, 0, 0, ROOM],
    ]);
    const policy = new CacheAwarePolicy(policyConfig({ workerQueueLimit: 4 }));
    const out = policy.select(
      context({
        workers: [owner, idle],
        load,
        gate: { limit: 4 },
        inputTokens: BIG_INPUT,
        prefix: signal(10, [[owner, 7]]),
      }),
    );
    expect(flat(out)).toMatchObject({
      ok: true,
      worker: idle,
      decision: 'cache_worker_queued',
      divertedOverlapBlocks: 7,
      gateRejected: [owner],
    });
  });

  it('a_saturated_fleet_still_routes_through_the_capacity_fallback', () => {
    const a = worker('a');
    const b = worker('b');
    const load = snapshot([
      [a, 0, 0, 1000, 1000],
      [b, 0, 0, 1000, 1000],
    ]);
    const policy = new CacheAwarePolicy();
    for (let seed = 0; seed < 8; seed++) {
      const out = policy.select(context({ workers: [a, b], load, random: seeded(seed) }));
      expect(out.ok).toBe(true);
      if (!out.ok) return;
      expect([a, b]).toContain(out.worker);
      expect(out.reason).toBe('no_cache_candidate_capacity_fallback_power_of_two');
      expect(out.cacheAware?.decision).toBe('cache_miss');
    }
  });

  it('a_sampled_choice_never_lands_on_a_rejected_worker', () => {
    const full = worker('full');
    const room = worker('room');
    const load = snapshot([
      [full, 0, 0, 1000, 1000],
      [room, 0, 0, 0, ROOM],
    ]);
    for (const minLoadChoices of [1, 2]) {
      const policy = new CacheAwarePolicy(cacheAwareConfig({ minLoadChoices }));
      for (let i = 0; i < 32; i++) {
        const out = policy.select(context({ workers: [full, room], load, random: seeded(i) }));
        expect(out.ok && out.worker).toBe(room);
      }
    }
  });
});
