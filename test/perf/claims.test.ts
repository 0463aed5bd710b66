import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { benchmarkWriting } from '../../perf/support/catalogue.js';
import { claimsPage, readResults } from '../../perf/support/claims-page.js';
import { CLAIMS, claimCells, claimsTableMarkdown, runCell } from '../../perf/support/claims.js';
import type { PerfResult } from '../../perf/support/results.js';

/**
 * BENCHMARKS.md's claims table is written from perf/results (perf/support/claims.ts):
 * every figure a run's, every run at a committed tree, every seeded one marked. This
 * holds the committed page to what `npm run docs` writes, and each row to its result.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const results = readResults(ROOT);
const table = claimsTableMarkdown(results, (n) => benchmarkWriting(n)?.name);
const rows = table.split('\n').slice(2);

describe('the claims table', () => {
  it('stands in BENCHMARKS.md as npm run docs writes it', () => {
    expect(readFileSync(path.join(ROOT, 'BENCHMARKS.md'), 'utf8')).toBe(claimsPage(ROOT));
  });

  it('has a row per claim, each reading a result a benchmark writes', () => {
    expect(rows).toHaveLength(CLAIMS.length);
    for (const c of CLAIMS) {
      expect(results.has(c.result), c.claim).toBe(true);
      expect(benchmarkWriting(c.result), c.claim).toBeDefined();
    }
  });

  it('names no result measured on uncommitted changes', () => {
    expect([...results.values()].filter((r) => r.dirty || r.commit === null).map((r) => r.name)).toEqual([]);
  });

  it('marks each row whose result was seeded from prose, and no other', () => {
    CLAIMS.forEach((c, i) => {
      const seeded = results.get(c.result)!.source === 'BENCHMARKS.md';
      expect(rows[i]!.includes('seeded: not re-run'), c.claim).toBe(seeded);
    });
  });

  it('keeps a row short enough to read: no cell over 160 characters', () => {
    for (const row of rows) for (const cell of row.split(' | ')) expect(cell.length, cell).toBeLessThanOrEqual(160);
  });

  it("takes the goal and the verdict from the benchmark's own judgement", () => {
    const r = results.get('fleet-scale')!;
    const c = CLAIMS.find((x) => x.result === 'fleet-scale' && x.claim.includes('p50 and p99'))!;
    const judged = (p99: boolean): PerfResult => ({
      ...r,
      goals: r.goals.map((g) => ({ ...g, met: g.claim.startsWith('p99') ? p99 : true })),
    });
    expect(claimCells(c, judged(true))).toMatchObject({ goal: '≤ 1.5×; ≤ 2×', met: 'yes' });
    const failing = judged(false);
    expect(claimCells(c, failing).met).toBe('no');
  });

  it('refuses a row whose figure the result lacks, naming the key and the file', () => {
    const r = results.get('prefix')!;
    const { key_plus_match_100k_us: _gone, ...rest } = r.figures;
    const c = CLAIMS.find((x) => x.result === 'prefix' && x.section === 2)!;
    expect(() => claimCells(c, { ...r, figures: rest })).toThrow(/perf\/results\/prefix\.json has no number figure key_plus_match_100k_us/);
  });

  it('says which runs are seeded or dirty in the run cell', () => {
    const r = results.get('prefix')!;
    expect(runCell({ ...r, source: 'BENCHMARKS.md', dirty: false, commit: 'abcdef123456', date: '2026-11-30' })).toBe(
      'abcdef1, 2026-11-30, seeded: not re-run',
    );
    expect(runCell({ ...r, source: 'run', dirty: true, commit: 'abcdef123456', date: '2026-12-02T05:00:14.192Z' })).toBe(
      'abcdef1, 2026-12-02, uncommitted changes',
    );
    expect(runCell({ ...r, source: 'run', dirty: false, commit: 'abcdef123456', date: '2026-12-02T05:00:14.192Z' })).toBe(
      'abcdef1, 2026-12-02',
    );
  });
});
