/**
 * The sampled "gate is inert" warning (docs/routing.md §Gate-inert warning).
 */
import { describe, expect, it } from 'vitest';
import { CacheAwarePolicy } from '../../src/router/policies/cache-aware/cache-aware-policy.js';
import { cacheAwareConfig } from '../../src/router/policies/cache-aware/config.js';
import {
  InertGateWarning,
  QUEUE_GATE_BLIND_LOG_SAMPLE,
  QUEUE_GATE_INERT_MESSAGE,
} from '../../src/router/policies/cache-aware/inert-warning.js';
import { context, EMPTY_LOAD, gateAt, poolOf, policyConfig, signal, snapshot, worker } from './fixture.js';

const INPUT = 100_000;
const a = worker('inert-a');
const b = worker('inert-b');
const blindPool = poolOf([a, b], EMPTY_LOAD, { limit: 4 });
const prefix = signal(10, [[a, 9]]);

function dueCalls(policy: CacheAwarePolicy, calls: number, sampled: boolean): number[] {
  const load = sampled ? snapshot([[b, 0, 0, 0, 1_000_000]]) : EMPTY_LOAD;
  const due: number[] = [];
  for (let call = 1; call <= calls; call++) {
    const out = policy.select(context({ workers: [a, b], load, gate: { limit: 4 }, inputTokens: INPUT, prefix }));
    expect(out.ok).toBe(true);
    if (out.cacheAware?.inertWarning === true) due.push(call);
  }
  return due;
}

describe('sampled gate-inert warning', () => {
  it('carries the reference message verbatim', () => {
    expect(QUEUE_GATE_INERT_MESSAGE).toBe(
      '--worker-queue-limit is set but no worker has a fresh engine load sample, so the queue gate is inert. Check that engines advertise a load port and publish LoadStat',
    );
    expect(QUEUE_GATE_BLIND_LOG_SAMPLE).toBe(64);
  });

  it('is due on the 1st, 65th and 129th blind tick', () => {
    const w = new InertGateWarning();
    const due: number[] = [];
    for (let call = 1; call <= 200; call++) if (w.tick(gateAt(4), blindPool)) due.push(call);
    expect(due).toEqual([1, 65, 129, 193]);
    expect(w.blindSelections).toBe(200);
  });

  it('is due exactly on blind selections 1, 65 and 129 through the policy', () => {
    const policy = new CacheAwarePolicy(policyConfig({ workerQueueLimit: 4 }));
    expect(dueCalls(policy, 130, false)).toEqual([1, 65, 129]);
  });

  it('never fires, and does not count, while any pool worker has a fresh sample', () => {
    const policy = new CacheAwarePolicy(policyConfig({ workerQueueLimit: 4 }));
    expect(dueCalls(policy, 100, true)).toEqual([]);
    // The first blind selection after them is still the first blind one.
    expect(dueCalls(policy, 1, false)).toEqual([1]);
  });

  it('never fires without a limit', () => {
    const policy = new CacheAwarePolicy(cacheAwareConfig());
    const outs = Array.from({ length: 70 }, () =>
      policy.select(context({ workers: [a, b], load: EMPTY_LOAD, inputTokens: INPUT, prefix })),
    );
    expect(outs.some((o) => o.cacheAware?.inertWarning === true)).toBe(false);
  });

  it('does not count an empty pool or a selection without a candidate proposal', () => {
    const w = new InertGateWarning();
    expect(w.tick(gateAt(4), poolOf([], EMPTY_LOAD, { limit: 4 }))).toBe(false);
    expect(w.tick(gateAt(null), blindPool)).toBe(false);
    expect(w.blindSelections).toBe(0);

    const policy = new CacheAwarePolicy(policyConfig({ workerQueueLimit: 4 }));
    for (let i = 0; i < 5; i++) {
      const miss = policy.select(context({ workers: [a, b], load: EMPTY_LOAD, gate: { limit: 4 }, inputTokens: INPUT }));
      expect(miss.cacheAware?.inertWarning).toBeUndefined();
    }
    expect(dueCalls(policy, 1, false)).toEqual([1]);
  });
});
