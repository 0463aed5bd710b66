import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README's Layout section against the tree: every path it names exists, and every
 * area of src/ and every folder of src/router/ (and of its state/) is named, so the
 * map cannot drift from the house as it did once.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const block = /## Layout\n\n```\n([\s\S]*?)\n```/.exec(readme)?.[1] ?? '';

/** The paths a Layout line names: its leading words ending in `/` or a file name, nested lines under src/router/. */
function namedPaths(): string[] {
  const out: string[] = [];
  for (const line of block.split('\n')) {
    const nested = line.startsWith('  ');
    const words = line.trim().split(/\s+/);
    for (const w of words) {
      if (!/^[\w.-]+(\/[\w.-]+)*\/?$/.test(w) || !(w.endsWith('/') || /\.\w+$/.test(w))) break;
      out.push(nested ? `src/router/${w}` : w);
    }
  }
  return out;
}

const dirs = (p: string): string[] => readdirSync(path.join(ROOT, p)).filter((d) => statSync(path.join(ROOT, p, d)).isDirectory());

describe('README Layout', () => {
  const named = namedPaths();

  it('names only paths that exist', () => {
    expect(named.length).toBeGreaterThan(30);
    expect(named.filter((p) => !existsSync(path.join(ROOT, p)))).toEqual([]);
  });

  it('names every area of src/, every folder of src/router/ and of src/router/state/', () => {
    const wanted = [
      ...dirs('src').map((d) => `src/${d}/`),
      ...dirs('src/router').map((d) => `src/router/${d}/`),
      ...dirs('src/router/state').map((d) => `src/router/state/${d}/`),
    ];
    // A folder whose subfolders are named (state/…) counts as named.
    expect(wanted.filter((p) => !named.some((n) => n.startsWith(p)))).toEqual([]);
  });
});
