import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One relative import in the compiled output: from file, to file (both relative to dist/), and how. */
export interface ImportEdge {
  from: string;
  to: string;
  dynamic: boolean;
}

const STATIC = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s*)?['"](\.[^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/**
 * The relative imports of every compiled module under `dist` that still has a source
 * file under `root` (a module whose source was moved or deleted is a stale leftover of
 * an earlier build, not part of the program). Type-only imports are erased by the
 * compiler, so this is the graph that runs.
 */
export function compiledImports(root: string, dist: string, folders: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const visit = (dir: string): void => {
    for (const entry of readdirSync(path.join(dist, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) visit(rel);
      else if (rel.endsWith('.js') && hasSource(root, rel)) {
        const text = readFileSync(path.join(dist, rel), 'utf8');
        for (const [re, dynamic] of [
          [STATIC, false],
          [DYNAMIC, true],
        ] as const) {
          for (const m of text.matchAll(re))
            edges.push({ from: rel, to: path.posix.normalize(path.posix.join(path.posix.dirname(rel), m[1]!)), dynamic });
        }
      }
    }
  };
  for (const f of folders) if (existsSync(path.join(dist, f))) visit(f);
  return edges;
}

function hasSource(root: string, jsPath: string): boolean {
  const base = path.join(root, jsPath.slice(0, -'.js'.length));
  return existsSync(`${base}.ts`) || existsSync(`${base}.tsx`);
}

/** The top-level area a module belongs to: `src/<name>`, or the root folder (`commands`, `bench`). */
export function areaOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'src' ? `src/${parts[1]}` : parts[0]!;
}

/**
 * What breaks the layering, one sentence per edge: an import into another area that
 * does not go through an `index.js` (the area's list of what it offers), one into an
 * area that is not strictly lower, and an area missing from the ranking.
 */
export function layeringViolations(edges: readonly ImportEdge[], ranks: Readonly<Record<string, number>>): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const a = areaOf(e.from);
    const b = areaOf(e.to);
    if (a === b) continue;
    if (!(a in ranks)) out.push(`${a} has no rank (imported by nothing ranked, imports ${b})`);
    else if (!(b in ranks)) out.push(`${b} has no rank (imported by ${e.from})`);
    else if (ranks[b]! >= ranks[a]!) out.push(`${e.from} imports ${e.to}: ${b} is not below ${a}`);
    if (path.posix.basename(e.to) !== 'index.js') out.push(`${e.from} imports ${e.to}, not an index.js of ${b}`);
  }
  return [...new Set(out)];
}

/** Every import cycle between files (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return cycles;
}
