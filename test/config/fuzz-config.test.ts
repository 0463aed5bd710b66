import { writeFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPTIONS, RC_SEARCH_PLACES, resolveConfig } from '../../src/config/index.js';
import { Rng } from '../../src/sim/rng.js';
import { emptyDir } from './support.js';

/**
 * The config loader against what people and programs actually leave in rc files:
 * valid keys with values of every wrong kind, near-miss keys, truncated and
 * byte-flipped documents, YAML anchors and tags, nested junk, huge strings. Seeded
 * and bounded; the claims are that nothing throws, every problem is one bounded line
 * with a code, and memory does not grow with the number of cases.
 */
const CASES = 2000;
const FILES = RC_SEARCH_PLACES.filter((p) => !p.endsWith('.js') && !p.endsWith('.mjs') && !p.endsWith('.cjs'));
const FLAGS = OPTIONS.map((o) => o.flag);
const KEYS = [
  ...FLAGS,
  ...OPTIONS.map((o) => o.key),
  'worker-queue-limt',
  'policy ',
  '',
  '__proto__',
  'constructor',
  '$import',
  'config',
  'routerctl',
];

function value(rng: Rng, depth = 0): unknown {
  switch (rng.int(depth > 2 ? 9 : 12)) {
    case 0:
      return null;
    case 1:
      return rng.next() < 0.5;
    case 2:
      return rng.int(20) - 5;
    case 3:
      return [1e308, -0, 2 ** 53 + 1, 0.5, 1e-9, -1][rng.int(6)];
    case 4:
      return ['cache_aware', 'round_robin', 'http://127.0.0.1:1', 'ftp://x', '  ', '6', 'true', 'yes', 'NaN', '0x10', '1e3', 'ü\u0000'][
        rng.int(12)
      ];
    case 5:
      return 'z'.repeat(rng.int(5) === 0 ? 100_000 : rng.int(40));
    case 6:
      return String.fromCharCode(...Array.from({ length: rng.int(30) }, () => rng.int(0xffff)));
    case 7:
      return rng.int(1000) / 7;
    case 8:
      return '';
    case 9:
      return Array.from({ length: rng.int(4) }, () => value(rng, depth + 1));
    case 10:
      return Object.fromEntries(Array.from({ length: rng.int(4) }, () => [KEYS[rng.int(KEYS.length)]!, value(rng, depth + 1)]));
    default:
      return { nested: value(rng, depth + 1) };
  }
}

function document(rng: Rng, file: string): string {
  const data: Record<string, unknown> = {};
  for (let i = rng.int(8); i > 0; i--) data[KEYS[rng.int(KEYS.length)]!] = value(rng);
  const wrapped = file === 'package.json' ? { name: 'x', routerctl: rng.next() < 0.8 ? data : value(rng) } : data;
  let text: string;
  if (file.endsWith('.json') || rng.next() < 0.5) text = JSON.stringify(wrapped);
  else
    text =
      Object.entries(data)
        .map(([k, v]) => `${k}: ${JSON.stringify(v) ?? ''}`)
        .join('\n') + '\n';
  switch (rng.int(8)) {
    case 0:
      return text.slice(0, rng.int(text.length + 1));
    case 1: {
      const b = Buffer.from(text);
      for (let i = rng.int(4); i >= 0 && b.length > 0; i--) b[rng.int(b.length)] = rng.int(256);
      return b.toString('latin1');
    }
    case 2:
      return [
        '&a [*a]',
        '!!js/function "x"',
        '- a\n- b',
        'a: &x 1\nb: *x\nc: *y',
        '---\n---\n',
        ':',
        '\t\tpolicy: x',
        'null',
        '~',
        '"x"',
        '42',
        '{{{{',
      ][rng.int(12)]!;
    default:
      return text;
  }
}

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await emptyDir()));
afterAll(async () => cleanup());

describe('config loader fuzz', () => {
  it(`${CASES} seeded rc files: no throw, one bounded line per problem, flat memory`, async () => {
    const rng = new Rng(20261130);
    let rssAtQuarter = 0;
    const seen = new Set<string>();
    for (let i = 0; i < CASES; i++) {
      const file = FILES[rng.int(FILES.length)]!;
      const full = path.join(dir, file);
      await writeFile(full, document(rng, file));
      const r = await resolveConfig({ argv: {}, env: {}, cwd: dir });
      for (const p of [...r.errors, ...r.warnings]) {
        expect(p.code, p.message).toMatch(/^RCTL_[EW]_[A-Z_]+$/);
        expect(p.message, p.code).not.toMatch(/\n/);
        expect(p.message.length, p.code).toBeLessThan(600);
        seen.add(p.code);
      }
      await rm(full);
      if (i === CASES / 4) rssAtQuarter = process.memoryUsage().rss;
    }
    // The loader holds nothing between runs: the last three quarters add no more
    // than allocator noise.
    expect(process.memoryUsage().rss - rssAtQuarter).toBeLessThan(128 * 1024 * 1024);
    // The generator reaches the loader's main refusals, or the test proves little.
    for (const code of [
      'RCTL_E_PARSE_RC_SYNTAX',
      'RCTL_E_PARSE_UNKNOWN_KEY',
      'RCTL_E_PARSE_INVALID_TYPE',
      'RCTL_E_PARSE_RC_SHAPE',
      'RCTL_E_PARSE_NOT_A_NUMBER',
    ]) {
      expect(seen, code).toContain(code);
    }
  }, 60_000);
});
