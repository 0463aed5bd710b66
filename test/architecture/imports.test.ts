import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderCycles, importCycles, importsOf, layeringViolations, roomViolations, sourceImports } from './import-graph.js';
import type { ImportEdge } from './import-graph.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');

/** The `| rank | names |` rows of the first table under the `## ` heading that starts with `heading`: each backticked name with its rank. */
function rankRows(heading: string): Array<[name: string, rank: number]> {
  const section = doc.split(/^## /m).find((s) => s.startsWith(heading)) ?? '';
  const rows: Array<[string, number]> = [];
  for (const m of section.matchAll(/^\| (\d+) \| (.+) \|$/gm))
    for (const name of m[2]!.matchAll(/`([\w.-]+\/?)`/g)) rows.push([name[1]!, Number(m[1])]);
  return rows;
}

/**
 * The layering of the program, read from its one definition: the rank table of
 * docs/architecture.md §Layout. An area may import only from areas of a lower rank,
 * and only through their index.js; a new area gets a row there. A name ending in `/`
 * is a folder at the root (`commands/`, …), a bare name an area under src/.
 */
const AREA_ROWS = rankRows('Layout');
const RANKS = Object.fromEntries(AREA_ROWS.map(([name, rank]) => [name.endsWith('/') ? name.slice(0, -1) : `src/${name}`, rank]));
const ROOT_FOLDERS = AREA_ROWS.filter(([name]) => name.endsWith('/')).map(([name]) => name.slice(0, -1));

/** The rooms of src/router (its folders and the files at its top) and their ranks, from docs/architecture.md §Inside router/. */
const ROOM_RANKS = Object.fromEntries(rankRows('Inside router/').map(([name, rank]) => [name.replace(/\/$/, ''), rank]));

const edges = sourceImports(root, ['src', ...ROOT_FOLDERS]);

describe('the import graph of the sources, type imports included', () => {
  it('is ranked by the tables in docs/architecture.md', () => {
    expect(RANKS).toMatchObject({ 'src/errors': 0, 'src/contract': 2, 'src/config': 3, 'src/router': 4 });
    expect(ROOT_FOLDERS).toContain('commands');
    expect(ROOT_FOLDERS.filter((f) => !existsSync(path.join(root, f)))).toEqual([]);
    expect(ROOM_RANKS).toMatchObject({ logging: 0, 'router.ts': expect.any(Number) });
  });

  it('is read from the sources, type-only and dynamic imports with the rest', () => {
    expect(edges.length).toBeGreaterThan(600);
    expect(edges.some((e) => e.dynamic)).toBe(true);
    expect(edges.some((e) => e.typeOnly)).toBe(true);
  });

  it('ranks every area under src/', () => {
    const areas = readdirSync(path.join(root, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `src/${d.name}`);
    expect(areas.filter((a) => !(a in RANKS))).toEqual([]);
  });

  it('ranks every room of src/router: each folder and each file at its top', () => {
    const rooms = readdirSync(path.join(root, 'src/router'), { withFileTypes: true }).map((d) => d.name);
    expect(rooms.filter((r) => !(r in ROOM_RANKS))).toEqual([]);
  });

  it('points down: every import into another area goes to a lower one, through its index.js', () => {
    expect(layeringViolations(edges, RANKS)).toEqual([]);
  });

  it('points down inside src/router: every import into another room goes to a lower one', () => {
    expect(roomViolations(edges, 'src/router', ROOM_RANKS)).toEqual([]);
  });

  it('has no import cycle between files that runs: value imports, the whole program', () => {
    expect(importCycles(edges.filter((e) => !e.typeOnly))).toEqual([]);
  });

  it('has no import cycle between files, type imports included', () => {
    expect(importCycles(edges)).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    expect(folderCycles(edges)).toEqual([]);
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

  const rooms = { low: 0, high: 1, peer: 1, 'top.ts': 2 };
  it.each([
    { name: 'a room down to a lower room, any file', edge: e('src/a/high/x.js', 'src/a/low/deep/y.js'), ok: true },
    { name: 'inside a room', edge: e('src/a/high/x.js', 'src/a/high/deep/y.js'), ok: true },
    { name: 'a top file down to a room', edge: e('src/a/top.js', 'src/a/high/x.js'), ok: true },
    { name: 'a room up to a top file', edge: e('src/a/low/x.js', 'src/a/top.js'), ok: false },
    { name: 'a room up', edge: e('src/a/low/x.js', 'src/a/high/y.js'), ok: false },
    { name: 'sideways between two rooms of one rank', edge: e('src/a/high/x.js', 'src/a/peer/y.js'), ok: false },
    { name: 'into an unranked room', edge: e('src/a/high/x.js', 'src/a/new/y.js'), ok: false },
    { name: 'outside the area', edge: e('src/b/x.js', 'src/a/new/y.js'), ok: true },
  ])('room: $name', ({ edge, ok }) => {
    expect(roomViolations([edge], 'src/a', rooms).length === 0).toBe(ok);
  });

  it('finds a cycle of two files and of one, and none in a chain', () => {
    expect(importCycles([e('a.js', 'b.js'), e('b.js', 'a.js'), e('b.js', 'c.js')])).toEqual([['a.js', 'b.js']]);
    expect(importCycles([e('a.js', 'a.js')])).toEqual([['a.js']]);
    expect(importCycles([e('a.js', 'b.js'), e('b.js', 'c.js')])).toEqual([]);
  });

  it('finds a cycle between two folders through different files, and none inside one folder', () => {
    expect(folderCycles([e('p/a.js', 'q/b.js'), e('q/c.js', 'p/d.js')])).toEqual([['p', 'q']]);
    expect(folderCycles([e('p/a.js', 'p/b.js'), e('p/b.js', 'p/a.js')])).toEqual([]);
  });

  it('reads type-only imports, exports, imports over several lines, dynamic imports and import types', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { type B, type C } from '../b.js';",
      "import {\n  d,\n  e,\n} from './d.js';",
      "export { f } from './f.js';",
      "export type { G } from './g.js';",
      "const h = await import('./h.js');",
      "let i: import('./i.js').I;",
      "import { j } from 'node:path';",
    ].join('\n');
    expect(importsOf('src/x/m.ts', text).map((x) => [x.to, x.dynamic, x.typeOnly])).toEqual([
      ['src/x/a.js', false, true],
      ['src/b.js', false, true],
      ['src/x/d.js', false, false],
      ['src/x/f.js', false, false],
      ['src/x/g.js', false, true],
      ['src/x/h.js', true, false],
      ['src/x/i.js', false, true],
    ]);
  });
});
