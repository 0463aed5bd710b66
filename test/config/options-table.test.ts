import { describe, expect, it } from 'vitest';
import { OPTIONS, OPTION_GROUPS, defaultConfig, optionsForDisplay } from '../../src/config/index.js';

/** RouterConfig's keys are OPTIONS' keys (src/config/schema.ts), so each must be declared once, in a displayed group. */
describe('OPTIONS, the one table of settings', () => {
  it('declares each key and each flag once', () => {
    expect(new Set(OPTIONS.map((o) => o.key)).size).toBe(OPTIONS.length);
    expect(new Set(OPTIONS.map((o) => o.flag)).size).toBe(OPTIONS.length);
  });

  it('is what the resolved configuration holds, no more and no less', () => {
    expect(Object.keys(defaultConfig()).sort()).toEqual(OPTIONS.map((o) => o.key).sort());
  });

  it('shows every setting once, the queue gate first and the reference router parity tuning last', () => {
    expect(optionsForDisplay()).toHaveLength(OPTIONS.length);
    expect(
      optionsForDisplay()
        .slice(0, 3)
        .map((o) => o.flag),
    ).toEqual(['policy', 'worker-queue-limit', 'saturation-queue-floor']);
    expect(OPTION_GROUPS.slice(-2).map((g) => g.label)).toEqual([
      'Cache-aware tuning (reference router parity)',
      'Pressure guard (reference router parity)',
    ]);
  });
});
