/**
 * How long `routerctl --version` and each command's `--help` take, start to exit, as an
 * operator types them: `node bin/routerctl.js …` after the build. Each round runs every
 * case once, in turn, with a bare `node -e ''` among them, so that a busy machine slows
 * all alike and the bare start says how busy it was. A figure is the median over the
 * rounds (goal: ≤ 150 ms each, issue 31). Almost all of it is Node starting and loading
 * modules: the help path loads yargs and the option tables, `--version` alone not even
 * yargs (commands/index.ts).
 *
 *   npm run perf -- start-up [--rounds 5]
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { benchArg } from './support/args.js';
import { atMost, writeResult } from './support/results.js';
import type { Figures, GoalVerdict } from './support/results.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = 'bin/routerctl.js';
const GOAL_MS = 150;
const rounds = Math.max(1, Number(benchArg('rounds', '5')));

/** What is timed, by the figure's name; null args: a bare `node -e ''`, the floor every case stands on. */
const CASES: ReadonlyArray<readonly [name: string, args: readonly string[] | null]> = [
  ['node_bare', null],
  ['version', ['--version']],
  ['help', ['--help']],
  ...['serve', 'top', 'explain', 'doctor', 'check-config', 'sim', 'bench'].map((c) => [`${c}_help`, [c, '--help']] as const),
  ...['run', 'compare', 'capture'].map((s) => [`bench_${s}_help`, ['bench', s, '--help']] as const),
];

function timeOnce(args: readonly string[] | null): number {
  const argv = args === null ? ['-e', ''] : [BIN, ...args];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`node ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

const load1 = loadavg()[0]!;
// One untimed pass: the first start after a build pays for a cold file cache.
for (const [, args] of CASES) timeOnce(args);
const samples = new Map<string, number[]>(CASES.map(([name]) => [name, []]));
for (let round = 0; round < rounds; round++) for (const [name, args] of CASES) samples.get(name)!.push(timeOnce(args));

const figures: Figures = { rounds, load_average_1m: Number(load1.toFixed(2)) };
const goals: GoalVerdict[] = [];
console.log(`node ${process.version}; median of ${rounds} rounds; load average ${load1.toFixed(2)} at the start`);
for (const [name, args] of CASES) {
  const ms = median(samples.get(name)!);
  figures[`${name}_median_ms`] = Math.round(ms);
  const shown = args === null ? "node -e ''" : `routerctl ${args.join(' ')}`;
  console.log(`  ${shown.padEnd(34)} ${Math.round(ms).toString().padStart(4)} ms   (${samples.get(name)!.map(Math.round).join(' ')})`);
  if (args !== null) goals.push(atMost(`${shown}, median of ${rounds}`, Math.round(ms), GOAL_MS, ' ms'));
}
writeResult('start-up', {
  figures,
  goals,
  bottleneck: "Node's own start (node_bare) and module loading; one process at a time, on a machine others may share",
});
