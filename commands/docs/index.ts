/**
 * What the docs tooling offers the benchmarks above it: the generated-block markers
 * `npm run docs` fills, so perf/support/claims-page.ts fills BENCHMARKS.md's claims
 * table the same way. Not reached from commands/index.ts: `main` never loads it.
 */
export { replaceBlock } from './generated-block.js';
export type { BlockStyle } from './generated-block.js';
