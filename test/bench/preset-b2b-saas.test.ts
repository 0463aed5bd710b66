import { describe, expect, it } from 'vitest';
import { B2B_SAAS } from '../../src/bench/preset/b2b-saas.js';
import type { Preset } from '../../src/bench/preset/b2b-saas.js';
import { presetVerdict, renderPresetReport } from '../../src/bench/preset/preset-report.js';
import { runPreset } from '../../src/bench/preset/preset-run.js';

/**
 * The b2b-saas preset scaled down by SCALE (docs/bench.md §Presets): 8 / SCALE engines,
 * groups and each stage's rate divided likewise; the same stages, engine, prompts and
 * output length: per engine, the full preset's load.
 */
const SCALE = 4;
const SCALED: Preset = {
  ...B2B_SAAS,
  workers: B2B_SAAS.workers / SCALE,
  workload: {
    ...B2B_SAAS.workload,
    groups: B2B_SAAS.workload.groups / SCALE,
    stages: B2B_SAAS.workload.stages.map((s) => ({ ...s, rate: s.rate / SCALE })),
  },
  arms: B2B_SAAS.arms.filter((a) => a.peer !== null),
};

describe('bench compare --preset b2b-saas, scaled down, on the virtual clock', () => {
  const result = runPreset(SCALED, 1);
  const p90 = (peer: string): number => result.arms.find((a) => a.peer === peer)!.ttft_p90_s!;

  it("orders the arms on TTFT p90 as llm-d's table does", () => {
    expect(p90('precise (KV events)')).toBeLessThan(p90('approximate (router-side)'));
    expect(p90('approximate (router-side)')).toBeLessThan(p90('load-aware'));
    expect(Math.abs(p90('load-aware') / p90('random') - 1)).toBeLessThanOrEqual(0.2);
    expect(presetVerdict(result).ordered).toBe(true);
  });

  it('finishes every request, and the events index caches more than the requests index', () => {
    for (const a of result.arms) expect(a.finished).toBe(a.requests);
    const cached = (peer: string): number => result.arms.find((a) => a.peer === peer)!.cached_token_ratio!;
    expect(cached('precise (KV events)')).toBeGreaterThan(cached('approximate (router-side)'));
    expect(cached('approximate (router-side)')).toBeGreaterThan(cached('random'));
  });

  it("prints llm-d's columns beside the published figures", () => {
    const text = renderPresetReport(result).join('\n');
    for (const col of ['output tok/s', 'TTFT p90 s', 'TTFT mean s', 'wait queue']) expect(text).toContain(col);
    expect(text).toContain('0.542');
    expect(text).toContain('92.5');
  });

  it('is deterministic: the same seed gives the same figures', () => {
    const again = runPreset({ ...SCALED, arms: SCALED.arms.slice(0, 1) }, 1);
    expect(again.arms[0]).toEqual(result.arms[0]);
  });
});
