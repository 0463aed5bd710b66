import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PERF_BENCHMARKS, benchmarkWriting } from '../../perf/support/catalogue.js';
import type { PerfResult } from '../../perf/support/results.js';

/**
 * The performance suite's shape, not its figures (performance is measured by the
 * suite, never asserted in tests): the runner names every benchmark under perf/, and
 * every results file is one benchmark's, with the fields BENCHMARKS.md reads.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PERF = path.join(ROOT, 'perf');

describe('the performance suite', () => {
  it('names every program at the top of perf/, once, and nothing else', () => {
    const programs = readdirSync(PERF)
      .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
      .map((f) => f.replace(/\.ts$/, '.js'))
      .sort();
    expect(PERF_BENCHMARKS.map((b) => b.file).sort()).toEqual(programs);
    expect(new Set(PERF_BENCHMARKS.map((b) => b.name)).size).toBe(PERF_BENCHMARKS.length);
  });

  it('keeps one results file per benchmark, each naming itself, its commit and its goals', () => {
    const files = readdirSync(path.join(PERF, 'results')).filter((f) => f.endsWith('.json'));
    expect(files.map((f) => f.replace(/\.json$/, '')).filter((n) => benchmarkWriting(n) === undefined)).toEqual([]);
    for (const f of files) {
      const r = JSON.parse(readFileSync(path.join(PERF, 'results', f), 'utf8')) as PerfResult;
      expect(r.name, f).toBe(f.replace(/\.json$/, ''));
      expect(r.date, f).toMatch(/^\d{4}-\d{2}-\d{2}/);
      expect(r.machine.cpus, f).toBeGreaterThan(0);
      expect(Object.keys(r.figures).length, f).toBeGreaterThan(0);
      for (const g of r.goals) expect(typeof g.met, `${f}: ${g.claim}`).toBe('boolean');
    }
  });
});

describe('the runner', () => {
  /** The built suite in a git checkout of its own, a tracked file and a tracked result, each committed or not. */
  function checkout(dirty: boolean | 'a result'): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-perf-runner-'));
    cpSync(path.join(ROOT, 'dist', 'perf'), path.join(dir, 'dist', 'perf'), { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
    const git = (...args: string[]) =>
      expect(spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir }).status).toBe(0);
    git('init', '-q');
    writeFileSync(path.join(dir, 'tracked.txt'), 'one\n');
    mkdirSync(path.join(dir, 'perf', 'results'), { recursive: true });
    writeFileSync(path.join(dir, 'perf', 'results', 'selection.json'), '{}\n');
    // Without its program the benchmark fails at once, once the runner lets it start.
    if (dirty === 'a result') rmSync(path.join(dir, 'dist', 'perf', 'selection.js'));
    git('add', '.');
    git('commit', '-qm', 'one');
    if (dirty === true) writeFileSync(path.join(dir, 'tracked.txt'), 'two\n');
    if (dirty === 'a result') writeFileSync(path.join(dir, 'perf', 'results', 'selection.json'), '{"new": true}\n');
    return dir;
  }

  it('refuses a tree with uncommitted changes before it runs anything, and names the way out', () => {
    const dir = checkout(true);
    try {
      const r = spawnSync(process.execPath, [path.join(dir, 'dist', 'perf', 'run.js'), 'selection'], { encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(
        'perf: 1 tracked file(s) have uncommitted changes (tracked.txt); commit or stash them so the results name the tree they came from, or add --dirty to run without writing perf/results\n',
      );
      expect(r.stdout).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes a result written since the last commit for what it is, an output: the next run goes ahead', () => {
    const dir = checkout('a result');
    try {
      const r = spawnSync(process.execPath, [path.join(dir, 'dist', 'perf', 'run.js'), 'selection'], { encoding: 'utf8' });
      expect(r.stderr).not.toContain('uncommitted changes');
      expect(r.stderr).toContain('Cannot find module');
      expect(r.status).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists the suite whatever the tree', () => {
    const dir = checkout(true);
    try {
      const r = spawnSync(process.execPath, [path.join(dir, 'dist', 'perf', 'run.js')], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('usage: npm run perf -- <name> [flags]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
