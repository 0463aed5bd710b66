/**
 * Ports of the Rust router's admission tests (its src/policies/admission.rs), one
 * test per reference test, named after it; docs/routing.md §Rung-level examples
 * states the cases in words.
 */
import { describe, expect, it } from 'vitest';
import { capacityAdmits } from '../../src/router/policies/cache-aware/capacity.js';
import { DecisionReason } from '../../src/router/policies/cache-aware/decision.js';
import { resolvePrefill, resolvePrefillAdmitted } from '../../src/router/policies/cache-aware/prefill-admission.js';
import { comparePressure, lookupOver, workerOfSelf } from '../../src/router/policies/cache-aware/pressure.js';
import { resolveCacheCandidates } from '../../src/router/policies/cache-aware/resolve-cache-candidates.js';
import { candidate, EMPTY_LOAD, gateAt, INPUT_TOKENS, pair, poolOf, proposal, seeded, snapshot, worker } from './fixture.js';

const ROOM = 100_000;

describe('admission (reference admission.rs tests)', () => {
  it('capacity_rejects_only_when_the_published_capacity_is_exceeded', () => {
    const full = worker('full');
    const other = worker('other');
    const busy = worker('busy');
    const load = snapshot([
      [full, 0, 0, 90, 100],
      [other, 0, 0, 0, 100],
      [busy, 63, 0, 0, 100],
    ]);
    expect(capacityAdmits(load, full, 20)).toBe(false);
    // Exactly filling the published capacity is not exceeding it.
    expect(capacityAdmits(load, full, 10)).toBe(true);
    // The 64th running request fits; a 65th does not.
    expect(capacityAdmits(load, busy, 1)).toBe(true);
    expect(capacityAdmits(snapshot([[busy, 64, 0, 0, 100]]), busy, 1)).toBe(false);

    const d = resolvePrefillAdmitted([full, other], pair(full, other), 20, load, gateAt(null));
    expect(d?.selected).toBe(other);
    expect(d?.reason).toBe(DecisionReason.BackupPrimaryAdmission);
  });

  it('all_capacity_rejected_falls_back_to_power_of_two_within_eligible_domain', () => {
    const primary = worker('primary');
    const backup = worker('backup');
    const outside = worker('outside');
    const load = snapshot([
      [primary, 0, 1, 100, 100],
      [backup, 0, 2, 100, 100],
      [outside, 0, 0, 0, ROOM],
    ]);
    // The legal range excludes `outside`, as eligible_workers does in the reference.
    const range = [primary, backup];
    expect(resolvePrefillAdmitted(range, pair(primary, backup), INPUT_TOKENS, load, gateAt(null))).toBeUndefined();
    for (let seed = 0; seed < 16; seed++) {
      const d = resolvePrefill(range, pair(primary, backup), INPUT_TOKENS, load, gateAt(undefined), 2, seeded(seed));
      expect([primary, backup]).toContain(d?.selected);
      expect(d?.reason).toBe(DecisionReason.CapacityFallbackPowerOfTwo);
      expect(d?.primary).toBe(primary);
      expect(d?.backup).toBe(backup);
    }
  });

  it('capacity_fallback_uses_the_explicit_snapshot_for_power_of_two', () => {
    const left = worker('left');
    const right = worker('right');
    const rightCalmer = snapshot(
      [
        [left, 0, 5, 100, 100],
        [right, 0, 1, 100, 100],
      ],
      42,
    );
    const d = resolvePrefill([left, right], pair(left, right), INPUT_TOKENS, rightCalmer, gateAt(undefined), 2, seeded(1));
    expect(d?.selected).toBe(right);
    expect(d?.reason).toBe(DecisionReason.CapacityFallbackPowerOfTwo);
    expect(d?.loadSnapshotVersion).toBe(42);
    expect(d?.retry).toBe(left);

    const leftCalmer = snapshot(
      [
        [left, 0, 1, 100, 100],
        [right, 0, 5, 100, 100],
      ],
      43,
    );
    const e = resolvePrefill([left, right], pair(left, right), INPUT_TOKENS, leftCalmer, gateAt(undefined), 2, seeded(1));
    expect(e?.selected).toBe(left);
    expect(e?.loadSnapshotVersion).toBe(43);
  });

  it('prefill_pressure_uses_waiting_then_running_requests', () => {
    const a = worker('a');
    const b = worker('b');
    const c = worker('c');
    const load = snapshot([
      [a, 1, 8, 0, ROOM],
      [b, 9, 2, 0, ROOM],
      [c, 3, 2, 0, ROOM],
    ]);
    const lookup = lookupOver(load, [a, b, c], workerOfSelf);
    expect(lookup.compareEngine).toBe(true);
    expect(comparePressure(lookup, a, b)).toBeGreaterThan(0);
    expect(comparePressure(lookup, b, a)).toBeLessThan(0);
    // Equal waiting: running decides.
    expect(comparePressure(lookup, c, b)).toBeLessThan(0);
  });

  it('missing_snapshot_uses_local_active_load', () => {
    const busy = worker('busy', 1);
    const idle = worker('idle', 0);
    const lookup = lookupOver(EMPTY_LOAD, [busy, idle], workerOfSelf);
    expect(lookup.compareEngine).toBe(false);
    expect(lookup.source).toBe('router_local');
    expect(comparePressure(lookup, busy, idle)).toBeGreaterThan(0);
  });

  it('complete_monitor_pressure_guard_overrides_a_near_cache_gain', () => {
    const congested = worker('congested');
    const idle = worker('idle');
    const load = snapshot([
      [congested, 0, 1000, 0, ROOM],
      [idle, 0, 10, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(congested, 10, 9), candidate(idle, 20, 8)], {
        switchMarginTokens: 32,
        guard: { enabled: true, absTokens: 100, absMs: null, rel: 1.5 },
      }),
      INPUT_TOKENS,
      load,
      poolOf([congested, idle], load),
    );
    expect(r.decision?.selected).toBe(idle);
    expect(r.decision?.reason).toBe(DecisionReason.CacheCandidate);
    expect(r.audit.prefillPressureSource).toBe('native_queue_tokens');
    expect(r.audit.pressureGuardComparedPairs).toBe(1);
    expect(r.audit.pressureGuardOverrides).toBe(1);
    expect(r.audit.admissionRejected).toBe(0);
  });

  it('queue_gate_diverts_off_an_owner_over_the_limit', () => {
    const owner = worker('owner');
    const other = worker('other');
    const load = snapshot([
      [owner, 0, 4, 0, ROOM],
      [other, 0, 0, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(owner, 10, 9), candidate(other, 60, 4)], { workerQueueLimit: 4 }),
      INPUT_TOKENS,
      load,
      poolOf([owner, other], load, { limit: 4 }),
    );
    expect(r.decision?.selected).toBe(other);
    expect(r.audit.queueGateRejected).toBe(1);
    expect(r.audit.queueGateBestRejectedBlocks).toBe(9);
    expect(r.audit.admissionRejected).toBe(0);
    expect(r.gateRejected.map((c) => c.worker)).toEqual([owner]);
  });

  it('queue_gate_disabled_keeps_the_deepest_owner', () => {
    const owner = worker('owner');
    const other = worker('other');
    const load = snapshot([
      [owner, 0, 40, 0, ROOM],
      [other, 0, 0, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(owner, 10, 9), candidate(other, 60, 4)]),
      INPUT_TOKENS,
      load,
      poolOf([owner, other], load),
    );
    expect(r.decision?.selected).toBe(owner);
    expect(r.audit.queueGateRejected).toBe(0);
  });

  it('queue_gate_missing_snapshot_admits', () => {
    const unknown = worker('unknown');
    const other = worker('other');
    const r = resolveCacheCandidates(
      proposal([candidate(unknown, 10, 9), candidate(other, 60, 4)], { workerQueueLimit: 4 }),
      INPUT_TOKENS,
      EMPTY_LOAD,
      poolOf([unknown, other], EMPTY_LOAD, { limit: 4 }),
    );
    expect(r.decision?.selected).toBe(unknown);
    expect(r.audit.queueGateRejected).toBe(0);
  });

  it('queue_gate_exhausted_candidates_returns_no_decision_with_audit', () => {
    const owner = worker('owner');
    const idle = worker('idle');
    const load = snapshot([
      [owner, 0, 9, 0, ROOM],
      [idle, 0, 0, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(owner, 10, 9)], { workerQueueLimit: 4 }),
      INPUT_TOKENS,
      load,
      poolOf([owner, idle], load, { limit: 4 }),
    );
    expect(r.decision).toBeUndefined();
    expect(r.audit).toMatchObject({
      queueGateRejected: 1,
      queueGateBestRejectedBlocks: 9,
      admissionEvaluated: 0,
      admissionRejected: 0,
      fleetAllQueued: false,
      queueGateFellBack: false,
    });
  });

  it('queue_gate_admits_one_below_the_limit', () => {
    const owner = worker('owner');
    const other = worker('other');
    const load = snapshot([
      [owner, 0, 3, 0, ROOM],
      [other, 0, 0, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(owner, 10, 9), candidate(other, 60, 4)], { workerQueueLimit: 4 }),
      INPUT_TOKENS,
      load,
      poolOf([owner, other], load, { limit: 4 }),
    );
    expect(r.decision?.selected).toBe(owner);
    expect(r.audit.queueGateRejected).toBe(0);
    expect(r.audit.admissionEvaluated).toBe(2);
  });

  it('queue_gate_keeps_the_prefix_when_the_whole_fleet_is_queueing', () => {
    const deep = worker('deep');
    const shallow = worker('shallow');
    const load = snapshot([
      [deep, 0, 9, 0, ROOM],
      [shallow, 0, 5, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(deep, 10, 9), candidate(shallow, 60, 4)], { workerQueueLimit: 4 }),
      INPUT_TOKENS,
      load,
      poolOf([deep, shallow], load, { limit: 4 }),
    );
    expect(r.decision?.selected).toBe(deep);
    expect(r.decision?.reason).toBe(DecisionReason.CacheCandidate);
    expect(r.audit).toMatchObject({
      queueGateFellBack: true,
      fleetAllQueued: true,
      queueGateRejected: 2,
      admissionEvaluated: 2,
    });
  });

  it('queue_gate_saturation_survives_a_capacity_exhausted_re_admission', () => {
    const deep = worker('deep');
    const shallow = worker('shallow');
    const load = snapshot([
      [deep, 0, 9, 1000, 1000],
      [shallow, 0, 5, 1000, 1000],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(deep, 10, 9), candidate(shallow, 60, 4)], { workerQueueLimit: 4 }),
      100_000,
      load,
      poolOf([deep, shallow], load, { limit: 4 }),
    );
    expect(r.decision).toBeUndefined();
    expect(r.audit).toMatchObject({
      fleetAllQueued: true,
      queueGateFellBack: true,
      queueGateRejected: 2,
      admissionEvaluated: 2,
      admissionRejected: 2,
    });
  });

  it('queue_gate_fleet_saturation_needs_a_fresh_sample_everywhere', () => {
    const owner = worker('owner');
    const silent = worker('silent');
    const load = snapshot([[owner, 0, 9, 0, ROOM]]);
    const r = resolveCacheCandidates(
      proposal([candidate(owner, 10, 9)], { workerQueueLimit: 4 }),
      INPUT_TOKENS,
      load,
      poolOf([owner, silent], load, { limit: 4 }),
    );
    expect(r.decision).toBeUndefined();
    expect(r.audit.fleetAllQueued).toBe(false);
    expect(r.audit.queueGateFellBack).toBe(false);
  });

  it('saturation_pin_keeps_affinity_with_the_least_pressured_owner', () => {
    const busy = worker('busy');
    const calm = worker('calm');
    const fleetOnly = worker('fleet-only');
    const load = snapshot(
      [
        [busy, 0, 9, 0, ROOM],
        [calm, 0, 5, 0, ROOM],
        [fleetOnly, 0, 3, 0, ROOM],
      ],
      9,
    );
    const r = resolveCacheCandidates(
      proposal([candidate(busy, 10, 9), candidate(calm, 60, 4)], { workerQueueLimit: 4, saturationQueueFloor: 2 }),
      INPUT_TOKENS,
      load,
      poolOf([busy, calm, fleetOnly], load, { limit: 4, floor: 2 }),
    );
    expect(r.decision).toMatchObject({
      reason: DecisionReason.SaturationPin,
      selected: calm,
      primary: calm,
      backup: undefined,
      loadSnapshotVersion: 9,
    });
    expect(r.audit.queueGateRejected).toBe(2);
    expect(r.audit.queueGateBestRejectedBlocks).toBe(9);
    expect(r.audit.admissionRejected).toBe(0);
  });

  it('no_saturation_floor_preserves_queue_gate_exhaustion', () => {
    const busy = worker('busy');
    const calm = worker('calm');
    const load = snapshot([
      [busy, 0, 9, 0, ROOM],
      [calm, 0, 5, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(busy, 10, 9), candidate(calm, 60, 4)], { workerQueueLimit: 4 }),
      INPUT_TOKENS,
      load,
      poolOf([busy, calm], load, { limit: 4 }),
    );
    expect(r.audit.queueGateFellBack).toBe(true);
    expect(r.decision?.reason).toBe(DecisionReason.CacheCandidate);
    expect(r.audit.queueGateRejected).toBe(2);
    expect(r.audit.queueGateBestRejectedBlocks).toBe(9);
  });

  it('saturation_pin_yields_to_a_provably_idle_fleet_worker', () => {
    const owner = worker('owner');
    const idle = worker('idle');
    const load = snapshot([
      [owner, 0, 9, 0, ROOM],
      [idle, 0, 0, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(owner, 10, 9)], { workerQueueLimit: 4, saturationQueueFloor: 2 }),
      INPUT_TOKENS,
      load,
      poolOf([owner, idle], load, { limit: 4, floor: 2 }),
    );
    expect(r.decision).toBeUndefined();
    expect(r.audit.queueGateRejected).toBe(1);
    expect(r.audit.queueGateBestRejectedBlocks).toBe(9);
  });

  it('saturation_pin_treats_an_unknown_queue_as_not_idle', () => {
    const owner = worker('owner');
    const unsampled = worker('unsampled');
    const load = snapshot([[owner, 0, 9, 0, ROOM]]);
    const r = resolveCacheCandidates(
      proposal([candidate(owner, 10, 9)], { workerQueueLimit: 4, saturationQueueFloor: 2 }),
      INPUT_TOKENS,
      load,
      poolOf([owner, unsampled], load, { limit: 4, floor: 2 }),
    );
    expect(r.decision?.reason).toBe(DecisionReason.SaturationPin);
    expect(r.decision?.selected).toBe(owner);
  });

  it('saturation_pin_ignores_idle_workers_outside_the_routable_fleet', () => {
    const owner = worker('owner');
    const outsider = worker('outsider');
    const load = snapshot([
      [owner, 0, 9, 0, ROOM],
      [outsider, 0, 0, 0, ROOM],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(owner, 10, 9)], { workerQueueLimit: 4, saturationQueueFloor: 2 }),
      INPUT_TOKENS,
      load,
      poolOf([owner], load, { limit: 4, floor: 2 }),
    );
    expect(r.decision?.reason).toBe(DecisionReason.SaturationPin);
    expect(r.decision?.selected).toBe(owner);
  });

  it('saturation_pin_skips_a_capacity_exhausted_owner', () => {
    const busy = worker('busy');
    const calmFull = worker('calm-full');
    const load = snapshot([
      [busy, 0, 9, 0, ROOM],
      [calmFull, 0, 5, 1000, 1000],
    ]);
    const r = resolveCacheCandidates(
      proposal([candidate(busy, 10, 9), candidate(calmFull, 60, 4)], { workerQueueLimit: 4, saturationQueueFloor: 2 }),
      INPUT_TOKENS,
      load,
      poolOf([busy, calmFull], load, { limit: 4, floor: 2 }),
    );
    expect(r.decision?.reason).toBe(DecisionReason.SaturationPin);
    expect(r.decision?.selected).toBe(busy);
    expect(r.audit.queueGateRejected).toBe(2);
    expect(r.audit.admissionRejected).toBe(0);
  });

  it('range_fallback_prefers_an_unqueued_worker_over_a_shallower_queueing_one', () => {
    const primary = worker('primary');
    const shallowQueued = worker('shallow-queued');
    const busyUnqueued = worker('busy-unqueued');
    const load = snapshot([
      [primary, 0, 0, 1000, 1000],
      [shallowQueued, 0, 5, 0, ROOM, { waitingUncached: 1 }],
      [busyUnqueued, 0, 3, 0, ROOM, { waitingUncached: 1000 }],
    ]);
    const range = [primary, shallowQueued, busyUnqueued];
    const gated = resolvePrefillAdmitted(range, pair(primary), INPUT_TOKENS, load, gateAt(4));
    expect(gated?.selected).toBe(busyUnqueued);
    expect(gated?.reason).toBe(DecisionReason.RangeFallback);
    // Without the gate's tiers, pressure alone would pick the queueing worker.
    const ungated = resolvePrefillAdmitted(range, pair(primary), INPUT_TOKENS, load, gateAt(null));
    expect(ungated?.selected).toBe(shallowQueued);
  });

  it('queue_gate_demotes_a_queueing_primary_that_capacity_would_admit', () => {
    const primary = worker('primary');
    const other = worker('other');
    const load = snapshot([
      [primary, 0, 6, 0, ROOM],
      [other, 0, 0, 0, ROOM],
    ]);
    const range = [primary, other];
    const ungated = resolvePrefillAdmitted(range, pair(primary), INPUT_TOKENS, load, gateAt(null));
    expect(ungated?.selected).toBe(primary);
    expect(ungated?.reason).toBe(DecisionReason.Primary);
    const gated = resolvePrefillAdmitted(range, pair(primary), INPUT_TOKENS, load, gateAt(4));
    expect(gated?.selected).toBe(other);
    expect(gated?.reason).toBe(DecisionReason.RangeFallback);
  });

  it('queue_gate_still_routes_when_the_only_admitted_worker_is_queueing', () => {
    const only = worker('only');
    const full = worker('full');
    const load = snapshot([
      [only, 0, 9, 0, ROOM],
      [full, 0, 0, 1000, 1000],
    ]);
    const d = resolvePrefillAdmitted([only, full], pair(only), INPUT_TOKENS, load, gateAt(4));
    expect(d?.selected).toBe(only);
    expect(d?.reason).toBe(DecisionReason.RangeFallback);
  });

  it('range_fallback_keeps_an_all_queueing_fleet_routable', () => {
    const primary = worker('primary');
    const left = worker('left');
    const right = worker('right');
    const load = snapshot([
      [primary, 0, 0, 1000, 1000],
      [left, 0, 9, 0, ROOM],
      [right, 0, 5, 0, ROOM],
    ]);
    const d = resolvePrefillAdmitted([primary, left, right], pair(primary, left), INPUT_TOKENS, load, gateAt(4));
    expect(d?.selected).toBe(right);
    expect(d?.reason).toBe(DecisionReason.RangeFallback);
  });
});
