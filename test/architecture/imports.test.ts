import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compiledImports, importCycles, layeringViolations } from './import-graph.js';
import type { ImportEdge } from './import-graph.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The layering of the program, read from its one definition: the rank table of
 * docs/architecture.md §Layout. An area may import only from areas of a lower rank,
 * and only through their index.js; a new area gets a row there.
 */
function ranksFromDocs(): Record<string, number> {
  const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const ranks: Record<string, number> = {};
  for (const m of doc.matchAll(/^\| (\d+) \| (.+) \|$/gm)) {
    for (const name of m[2]!.matchAll(/`([a-z-]+)(\/?)`/g)) {
      // `commands/` and `bench/` are root folders; a bare name is an area under src/.
      ranks[name[2] ? name[1]! : `src/${name[1]}`] = Number(m[1]);
    }
  }
  return ranks;
}

const RANKS = ranksFromDocs();

const edges = compiledImports(root, path.join(root, 'dist'), ['src', 'commands', 'bench']);

describe('the import graph of the compiled program', () => {
  it('is ranked by the table in docs/architecture.md', () => {
    expect(RANKS).toMatchObject({ 'src/errors': 0, 'src/router': 2, commands: 5, bench: 6 });
  });

  it('is read from the build', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges.some((e) => e.dynamic)).toBe(true);
  });

  it('ranks every area under src/', () => {
    const areas = readdirSync(path.join(root, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `src/${d.name}`);
    expect(areas.filter((a) => !(a in RANKS))).toEqual([]);
  });

  it('points down: every import into another area goes to a lower one, through its index.js', () => {
    expect(layeringViolations(edges, RANKS)).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(importCycles(edges)).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const e = (from: string, to: string): ImportEdge => ({ from, to, dynamic: false });
  const ranks = { 'src/low': 0, 'src/high': 1, 'src/peer': 1, commands: 2 };

  it.each([
    { name: 'down through an index', edge: e('src/high/a.js', 'src/low/index.js'), ok: true },
    { name: 'down through a sub-area index', edge: e('src/high/a.js', 'src/low/part/index.js'), ok: true },
    { name: 'inside an area, any file', edge: e('src/high/a.js', 'src/high/deep/b.js'), ok: true },
    { name: 'down into an internal file', edge: e('src/high/a.js', 'src/low/b.js'), ok: false },
    { name: 'up', edge: e('src/low/a.js', 'src/high/index.js'), ok: false },
    { name: 'sideways between two areas of one rank', edge: e('src/high/a.js', 'src/peer/index.js'), ok: false },
    { name: 'into an unranked area', edge: e('src/high/a.js', 'src/new/index.js'), ok: false },
  ])('$name', ({ edge, ok }) => {
    expect(layeringViolations([edge], ranks).length === 0).toBe(ok);
  });

  it('finds a cycle of two files and of one, and none in a chain', () => {
    expect(importCycles([e('a.js', 'b.js'), e('b.js', 'a.js'), e('b.js', 'c.js')])).toEqual([['a.js', 'b.js']]);
    expect(importCycles([e('a.js', 'a.js')])).toEqual([['a.js']]);
    expect(importCycles([e('a.js', 'b.js'), e('b.js', 'c.js')])).toEqual([]);
  });
});
