/**
 * How long `routerctl --version` and each command's `--help` take, start to exit, as an
 * operator types them: `node bin/routerctl.js …` after the build. Each round runs every
 * case once, in turn, with a bare `node -e ''` and a one-option yargs `--help` among
 * them, so that a busy machine slows all alike and the two floors say how busy it was. A figure is the median over the
 * rounds (goal: ≤ 150 ms each, issue 31). Almost all of it is Node starting and loading
 * modules. Neither `--version` nor a plain `--help` loads yargs: `--help` prints the text
 * `npm run docs` took from yargs (commands/registry/help-text.ts). `serve --help` is also
 * timed the way that text is read, through yargs and serve's option table, as what the
 * pre-written text saves.
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

/** A one-option `--help` from yargs alone: what any yargs CLI pays on top of a bare start. */
const YARGS_ALONE =
  "const { default: yargs } = await import('yargs');" +
  "await yargs(['--help']).scriptName('x').option('a', { type: 'string', describe: 'one option' }).exitProcess(false).parseAsync();";

interface Case {
  /** The figure's name, less `_median_ms`. */
  name: string;
  shown: string;
  /** A routerctl command, which the goal applies to; else one of the floors it stands on. */
  goal: boolean;
  node: readonly string[];
  env?: NodeJS.ProcessEnv;
}

const routerctl = (name: string, ...args: string[]): Case => ({
  name,
  shown: `routerctl ${args.join(' ')}`,
  goal: true,
  node: [BIN, ...args],
});

const CASES: readonly Case[] = [
  { name: 'node_bare', shown: "node -e ''", goal: false, node: ['-e', ''] },
  { name: 'yargs_alone_help', shown: 'yargs alone, a one-option --help', goal: false, node: ['--input-type=module', '-e', YARGS_ALONE] },
  routerctl('version', '--version'),
  routerctl('help', '--help'),
  ...['serve', 'top', 'explain', 'doctor', 'check-config', 'sim', 'bench'].map((c) => routerctl(`${c}_help`, c, '--help')),
  ...['run', 'compare', 'capture'].map((s) => routerctl(`bench_${s}_help`, 'bench', s, '--help')),
  {
    name: 'serve_help_from_yargs',
    shown: 'routerctl serve --help, by yargs',
    goal: false,
    node: [BIN, 'serve', '--help'],
    // HELP_FROM_YARGS_ENV of commands/registry/prewritten-help.ts.
    env: { ROUTERCTL_HELP_FROM_YARGS: '1' },
  },
];

function timeOnce({ node, env }: Case): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, node, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0', ...env } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`node ${node.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

const load1 = loadavg()[0]!;
// One untimed pass: the first start after a build pays for a cold file cache.
for (const c of CASES) timeOnce(c);
const samples = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
for (let round = 0; round < rounds; round++) for (const c of CASES) samples.get(c.name)!.push(timeOnce(c));

const figures: Figures = { rounds, load_average_1m: Number(load1.toFixed(2)) };
const goals: GoalVerdict[] = [];
console.log(`node ${process.version}; median of ${rounds} rounds; load average ${load1.toFixed(2)} at the start`);
for (const c of CASES) {
  const ms = Math.round(median(samples.get(c.name)!));
  figures[`${c.name}_median_ms`] = ms;
  console.log(`  ${c.shown.padEnd(34)} ${String(ms).padStart(4)} ms   (${samples.get(c.name)!.map(Math.round).join(' ')})`);
  if (c.goal) goals.push(atMost(`${c.shown}, median of ${rounds}`, ms, GOAL_MS, ' ms'));
}
writeResult('start-up', {
  figures,
  goals,
  bottleneck: "Node's own start (node_bare) and module loading; one process at a time, on a machine others may share",
});
