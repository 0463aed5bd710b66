/**
 * Shared prefill admission details beyond the reference tests
 * (docs/routing.md §Pair fallback): the pair's pressure-guard backup and the retry
 * choice each rung hands the proxy.
 */
import { describe, expect, it } from 'vitest';
import { DecisionReason } from '../../src/router/policies/cache-aware/decision.js';
import { capacityFallback, resolvePrefillAdmitted } from '../../src/router/policies/cache-aware/prefill-admission.js';
import { gateAt, INPUT_TOKENS, pair, scripted, snapshot, worker } from './fixture.js';

const ROOM = 1_000_000;
const guard = { enabled: true, absTokens: 100, absMs: null, rel: 1.5 };

describe('resolvePrefillAdmitted', () => {
  const primary = worker('pa-primary');
  const backup = worker('pa-backup');
  const load = snapshot([
    [primary, 0, 1000, 0, ROOM],
    [backup, 0, 10, 0, ROOM],
  ]);

  it('takes the backup when the guard hints are on and the primary is materially more pressured', () => {
    const d = resolvePrefillAdmitted([primary, backup], pair(primary, backup, guard), INPUT_TOKENS, load, gateAt(null));
    expect(d).toMatchObject({ selected: backup, reason: DecisionReason.BackupPressureGuard, retry: primary });
  });

  it('keeps the primary with hints off, and offers the admitted backup as the retry', () => {
    const d = resolvePrefillAdmitted([primary, backup], pair(primary, backup), INPUT_TOKENS, load, gateAt(null));
    expect(d).toMatchObject({ selected: primary, reason: DecisionReason.Primary, retry: backup });
  });

  it('offers no retry when the other pair member was turned away', () => {
    const d = resolvePrefillAdmitted([primary, backup], pair(primary, backup), INPUT_TOKENS, load, gateAt(2000));
    expect(d?.retry).toBe(backup);
    const gated = resolvePrefillAdmitted([primary, backup], pair(primary, backup), INPUT_TOKENS, load, gateAt(20));
    expect(gated).toMatchObject({ selected: backup, reason: DecisionReason.BackupPrimaryAdmission, retry: undefined });
    const alone = resolvePrefillAdmitted([primary, backup], pair(backup, primary), INPUT_TOKENS, load, gateAt(20));
    expect(alone).toMatchObject({ selected: backup, reason: DecisionReason.Primary, retry: undefined });
  });
});

describe('capacityFallback', () => {
  it('ignores capacity and the gate, and with k = 1 draws without a runner-up', () => {
    const a = worker('cf-a');
    const b = worker('cf-b');
    const load = snapshot([
      [a, 64, 9, ROOM, ROOM],
      [b, 64, 9, ROOM, ROOM],
    ]);
    const d = capacityFallback([a, b], pair(a, b), load, 1, scripted(0.9));
    expect(d).toMatchObject({ selected: b, reason: DecisionReason.CapacityFallbackPowerOfTwo, retry: undefined });
    expect(capacityFallback([], pair(a, b), load, 2, scripted(0))).toBeUndefined();
  });
});
