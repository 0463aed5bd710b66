/**
 * A benchmark's result as JSON next to the suite: perf/results/<name>.json, one file
 * per benchmark, overwritten by each run. History stays in git; why a figure moved
 * goes in the commit that moved it. BENCHMARKS.md publishes the accepted figures.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Named figures, units in the names (`key_plus_match_100k_us`): numbers, or a label when a figure is a verdict. */
export type Figures = Record<string, number | string | boolean | null>;

/** A claim with a goal: the figure it rests on, the goal as written, and whether the figure meets it. */
export interface GoalVerdict {
  readonly claim: string;
  readonly figure: number;
  readonly goal: string;
  readonly met: boolean;
}

export interface PerfResult {
  readonly name: string;
  /** `run`: written by the benchmark; `BENCHMARKS.md`: seeded from the figures published there. */
  readonly source: 'run' | 'BENCHMARKS.md';
  readonly date: string;
  /** The checkout measured; `dirty` when it had uncommitted changes. */
  readonly commit: string | null;
  readonly dirty: boolean;
  readonly machine: { readonly cpus: number; readonly cpuModel: string; readonly node: string; readonly platform: string };
  /** The flags the benchmark was given. */
  readonly args: readonly string[];
  readonly figures: Figures;
  readonly goals: readonly GoalVerdict[];
  /** What limited the run (the client, the upstream, one core…), as the benchmark saw it. */
  readonly bottleneck?: string;
  /** For seeded results: which published run the figures come from. */
  readonly notes?: string;
}

/** The repository: this file runs as dist/perf/support/results.js. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const RESULTS_DIR = path.join(ROOT, 'perf', 'results');

/** The figure meets the goal when it is at least `min`. */
export const atLeast = (claim: string, figure: number, min: number, unit = ''): GoalVerdict => ({
  claim,
  figure,
  goal: `≥ ${min}${unit}`,
  met: figure >= min,
});

/** The figure meets the goal when it is at most `max`. */
export const atMost = (claim: string, figure: number, max: number, unit = ''): GoalVerdict => ({
  claim,
  figure,
  goal: `≤ ${max}${unit}`,
  met: figure <= max,
});

function git(args: string[]): string | null {
  const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * The paths of tracked files with uncommitted changes, results aside; null outside a git
 * checkout. perf/results/ is what the suite writes, not what it measures: one run's new
 * result does not make the next run's tree another, so a sequence of runs can go on
 * before their results are committed together.
 */
export function uncommittedChanges(): string[] | null {
  // Not trimmed: each porcelain line starts with its two status columns, the first often a space.
  const r = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) return null;
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.slice(3))
    .filter((p) => !p.startsWith('perf/results/'));
}

/**
 * Write perf/results/<name>.json and say where; returns the path. A figure names the
 * committed tree it came from, so a run on uncommitted changes (`npm run perf -- <name>
 * --dirty`, or a benchmark started by hand) writes nothing and says so: returns null.
 */
export function writeResult(
  name: string,
  result: { figures: Figures; goals?: readonly GoalVerdict[]; bottleneck?: string },
): string | null {
  const commit = git(['rev-parse', '--short=12', 'HEAD']);
  const changed = uncommittedChanges();
  if (commit === null || changed === null || changed.length > 0) {
    const why = commit === null || changed === null ? 'not a git checkout' : `${changed.length} tracked file(s) changed`;
    process.stderr.write(`results: not written (${why}): a figure names the committed tree it came from\n`);
    return null;
  }
  const doc: PerfResult = {
    name,
    source: 'run',
    date: new Date().toISOString(),
    commit,
    dirty: false,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, platform: process.platform },
    args: process.argv.slice(2),
    figures: result.figures,
    goals: result.goals ?? [],
    ...(result.bottleneck === undefined ? {} : { bottleneck: result.bottleneck }),
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  process.stderr.write(`results: perf/results/${name}.json\n`);
  return file;
}
