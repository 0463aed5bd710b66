/**
 * BENCHMARKS.md with its claims table written from perf/results and the rows of
 * claims.ts. `npm run docs` writes it (write-claims.ts); test/perf/claims.test.ts holds
 * the committed page to it. Here rather than in commands/docs: the benchmarks sit
 * above the commands (docs/architecture.md), and the page is theirs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { replaceBlock } from '../../commands/docs/index.js';
import { benchmarkWriting } from './catalogue.js';
import { bottlenecksMarkdown, claimsTableMarkdown } from './claims.js';
import type { PerfResult } from './results.js';

/** Every result under `root`'s perf/results, by name. */
export function readResults(root: string): Map<string, PerfResult> {
  const dir = path.join(root, 'perf', 'results');
  const results = new Map<string, PerfResult>();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json')))
    results.set(f.replace(/\.json$/, ''), JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as PerfResult);
  return results;
}

/** BENCHMARKS.md under `root` as `npm run docs` leaves it. */
export function claimsPage(root: string): string {
  const file = 'BENCHMARKS.md';
  const text = readFileSync(path.join(root, file), 'utf8');
  const results = readResults(root);
  const table = claimsTableMarkdown(results, (n) => benchmarkWriting(n)?.name);
  return replaceBlock(replaceBlock(text, file, 'markdown', 'claims', table), file, 'markdown', 'bottlenecks', bottlenecksMarkdown(results));
}
