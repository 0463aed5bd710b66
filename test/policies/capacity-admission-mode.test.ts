/**
 * --capacity-admission (docs/routing.md §Hard capacity admission): which published
 * limits hard admission holds a worker to. A table over the predicate, then the ladder:
 * where the reference rule turns every owner away and the request falls to the capacity
 * fallback, the lighter modes keep it with its owner; and the queue gate still judges a
 * queued owner whatever the mode.
 */
import { describe, expect, it } from 'vitest';
import type { CapacityAdmissionMode } from '../../src/config/index.js';
import { CacheAwarePolicy } from '../../src/router/policies/cache-aware/cache-aware-policy.js';
import { capacityAdmits } from '../../src/router/policies/cache-aware/capacity.js';
import { context, flat, MAX_RUNNING, policyConfig, type Row, signal, snapshot, worker } from './fixture.js';

const w = worker('cap-w');

describe('capacityAdmits by mode', () => {
  // [case, running, used of 1000, input, reference, running, off]
  const rows: ReadonlyArray<readonly [string, number, number, number, boolean, boolean, boolean]> = [
    ['room for both', 10, 100, 100, true, true, true],
    ['the prompt overflows KV', 10, 950, 100, false, true, true],
    ['exactly filling KV', 10, 900, 100, true, true, true],
    ['the running cap is full', MAX_RUNNING, 100, 100, false, false, true],
    ['both full', MAX_RUNNING, 950, 100, false, false, true],
  ];
  it.each(rows)('%s', (_name, running, used, input, reference, runningOnly, off) => {
    const load = snapshot([[w, running, 0, used, 1000]]);
    const verdict = (mode: CapacityAdmissionMode): boolean => capacityAdmits(load, w, input, mode);
    expect([verdict('reference'), verdict('running'), verdict('off')]).toEqual([reference, runningOnly, off]);
  });

  it('admits a worker without native data in every mode (fail open)', () => {
    const load = snapshot([[w, MAX_RUNNING, 0, 950, 1000, { basicOnly: true }]]);
    for (const mode of ['reference', 'running', 'off'] as const) expect(capacityAdmits(load, w, 100, mode)).toBe(true);
  });
});

describe('the ladder under each mode', () => {
  const [deep, shallow, idle] = [worker('cap-deep'), worker('cap-shallow'), worker('cap-idle')];
  const select = (mode: CapacityAdmissionMode, rows: readonly Row[], limit?: number) =>
    flat(
      new CacheAwarePolicy(
        policyConfig({ capacityAdmission: mode, cacheAffinityMinMatchedTokens: 10, workerQueueLimit: limit ?? null, minLoadChoices: 3 }),
      ).select(
        context({
          workers: [deep, shallow, idle],
          load: snapshot(rows),
          gate: { limit: limit ?? null },
          prefix: signal(6, [
            [deep, 5],
            [shallow, 2],
          ]),
        }),
      ),
    );

  it('both owners short of KV: reference falls to the capacity fallback (cache_miss), running and off keep the deeper owner', () => {
    // idle has the room, and the least load: the fallback's min-load pick over all three is idle, never an owner.
    const rows: Row[] = [
      [deep, 4, 0, 980, 1000],
      [shallow, 5, 0, 990, 1000],
      [idle, 0, 0, 0, 1000],
    ];
    expect(select('reference', rows)).toMatchObject({ worker: idle, decision: 'cache_miss' });
    expect(select('running', rows)).toMatchObject({ worker: deep, decision: 'cache_hit' });
    expect(select('off', rows)).toMatchObject({ worker: deep, decision: 'cache_hit' });
  });

  it('the deeper owner at its running cap: running turns it away for the shallower owner, off keeps it', () => {
    const rows: Row[] = [
      [deep, MAX_RUNNING, 0, 0, 1000],
      [shallow, 5, 0, 0, 1000],
      [idle, 0, 0, 0, 1000],
    ];
    expect(select('reference', rows)).toMatchObject({ worker: shallow, decision: 'cache_hit' });
    expect(select('running', rows)).toMatchObject({ worker: shallow, decision: 'cache_hit' });
    expect(select('off', rows)).toMatchObject({ worker: deep, decision: 'cache_hit' });
  });

  it('off still leaves a queued owner to the gate: the request is diverted and booked cache_worker_queued', () => {
    const rows: Row[] = [
      [deep, 8, 6, 0, 1000],
      [shallow, 8, 6, 0, 1000],
      [idle, 0, 0, 0, 1000],
    ];
    expect(select('off', rows, 4)).toMatchObject({ worker: idle, decision: 'cache_worker_queued' });
  });
});
