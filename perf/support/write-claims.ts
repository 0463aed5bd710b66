/**
 * `npm run docs`, its last step: rewrite BENCHMARKS.md's claims table from perf/results
 * (claims-page.ts) and say whether it changed. Run from the build
 * (dist/perf/support/write-claims.js), so the root is three folders up.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { claimsPage } from './claims-page.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const at = `${root}BENCHMARKS.md`;
const text = claimsPage(root);
if (readFileSync(at, 'utf8') === text) process.stdout.write('claims: up to date\n');
else {
  writeFileSync(at, text);
  process.stdout.write('wrote BENCHMARKS.md\n');
}
