import { describe, expect, it } from 'vitest';
import { GSP_BLOCK_TOKENS, GSP_DEFAULTS, gspTrace } from '../../src/workload/index.js';

const opts = { ...GSP_DEFAULTS, rate: undefined, seed: 3 };

describe('gspTrace (SGLang generated-shared-prefix)', () => {
  it('makes groups × prompts requests of system + question tokens, all at time 0 without a rate', () => {
    const t = gspTrace(opts);
    expect(t).toHaveLength(64 * 16);
    for (const r of t) {
      expect(r.inputLength).toBe(2048 + 128);
      expect(r.outputLength).toBe(256);
      expect(r.atMs).toBe(0);
      expect(r.hashIds).toHaveLength(Math.ceil(r.inputLength / GSP_BLOCK_TOKENS));
    }
  });

  it('shares exactly the system prompt within a group and nothing across groups', () => {
    const t = gspTrace({ ...opts, numGroups: 4, promptsPerGroup: 4, ordered: true });
    const sys = 2048 / GSP_BLOCK_TOKENS;
    // Ordered: requests 0..3 are group 0, 4..7 group 1.
    expect(t[1]!.hashIds.slice(0, sys)).toEqual(t[0]!.hashIds.slice(0, sys));
    expect(t[1]!.hashIds[sys]).not.toBe(t[0]!.hashIds[sys]);
    expect(t[4]!.hashIds[0]).not.toBe(t[0]!.hashIds[0]);
  });

  it('chains later turns to the turn they follow, each resending the conversation so far', () => {
    const t = gspTrace({ ...opts, numGroups: 2, promptsPerGroup: 2, numTurns: 3, rate: 5 });
    expect(t).toHaveLength(12);
    for (const [i, r] of t.entries()) {
      if (r.after === undefined) continue;
      const prev = t[r.after]!;
      expect(r.after).toBe(i - 1);
      expect(r.atMs).toBe(0);
      expect(r.inputLength).toBe(prev.inputLength + 256 + 128);
      // The previous prompt's full blocks lead this one.
      const full = Math.floor(prev.inputLength / GSP_BLOCK_TOKENS);
      expect(r.hashIds.slice(0, full)).toEqual(prev.hashIds.slice(0, full));
    }
    expect(t.filter((r) => r.after === undefined).map((r) => r.atMs)).toEqual(
      [...t.filter((r) => r.after === undefined).map((r) => r.atMs)].sort((a, b) => a - b),
    );
  });

  it('draws groups by Zipf when asked: the first group is the largest', () => {
    const t = gspTrace({ ...opts, numGroups: 8, promptsPerGroup: 64, groupDistribution: 'zipf', zipfAlpha: 1.2 });
    const bySystem = new Map<number, number>();
    for (const r of t) bySystem.set(r.hashIds[0]!, (bySystem.get(r.hashIds[0]!) ?? 0) + 1);
    const sizes = [...bySystem.values()].sort((a, b) => b - a);
    expect(t).toHaveLength(512);
    expect(sizes[0]!).toBeGreaterThan((512 / 8) * 2);
  });

  it('draws lengths from [L × ratio, L] with a range ratio, the same for a seed', () => {
    const a = gspTrace({ ...opts, numGroups: 4, promptsPerGroup: 8, rangeRatio: 0.5 });
    expect(new Set(a.map((r) => r.outputLength)).size).toBeGreaterThan(1);
    for (const r of a) expect(r.outputLength).toBeGreaterThanOrEqual(128);
    expect(gspTrace({ ...opts, numGroups: 4, promptsPerGroup: 8, rangeRatio: 0.5 })).toEqual(a);
  });
});
