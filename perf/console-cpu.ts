/**
 * What the console itself costs: the CPU of the process that draws, in a real
 * terminal (a detached tmux pane) of each size, while the embedded default runs and
 * saturates (its bursts fill every queue, so the table, sparklines, charts, banners
 * and events all change every frame).
 *
 *   npm run perf -- console-cpu [--seconds 20] [--sizes 80x24,120x40,200x60] [--color 1]
 *   npm run perf -- console-cpu --attach-fleet 4096 [--seconds 20] [--sizes 200x60]
 *
 * Two consoles per size: `serve`'s (the parent process; its router is a child process
 * and is not counted) and `top` attached to that router (its own process). CPU is
 * user + system time from /proc over the window, after 8 s of warm-up, as a share of
 * one core. Colour on by default, as an operator's terminal has it. Bottleneck: none
 * by design; the figure is the console's own drawing and data handling, measured on a
 * machine whose other two processes (router, engines) compete for the same 2 cores.
 *
 * `--attach-fleet N` measures `top` alone, attached to a built router in front of N
 * workers (one fast stub process answering on N loopback ports, as perf/fleet-scale.ts
 * starts them): the console's cost at fleet scale, where the table holds N rows of
 * which only the visible ones are drawn. The router's own CPU over the same window is
 * reported beside it, since it builds what the stream carries.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { benchArg } from './support/args.js';
import { atMost, writeResult } from './support/results.js';
import type { GoalVerdict } from './support/results.js';

const seconds = Number(benchArg('seconds', '20'));
const fleet = Number(benchArg('attach-fleet', '0'));
const sizes = benchArg('sizes', fleet > 0 ? '200x60' : '80x24,120x40,200x60')
  .split(',')
  .map((s) => s.split('x').map(Number) as [number, number]);
const color = benchArg('color', '1') === '1';
if (spawnSync('tmux', ['-V']).status !== 0) throw new Error('this benchmark draws in tmux; install it');

const TICKS = 100; // USER_HZ on Linux
/** utime + stime of a process, in ticks (fields 14 and 15 of /proc/PID/stat; the name before them may hold spaces). */
const cpuTicks = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
};
const children = (pid: number): number[] =>
  spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const env = `env -u CI NODE_ENV=production ${color ? 'NO_COLOR= FORCE_COLOR=1' : 'NO_COLOR=1'}`;

type Tmux = (...args: string[]) => string;

/** A detached tmux session `name` of x×y columns and rows running `command`. */
function openPane(tmux: Tmux, name: string, x: number, y: number, command: string): void {
  tmux('new-session', '-d', '-s', name, '-x', String(x), '-y', String(y), command);
}

/** The process id of the shell in session `name`'s pane. */
function panePid(tmux: Tmux, name: string): number {
  return Number(tmux('list-panes', '-t', name, '-F', '#{pane_pid}').trim());
}

async function share(pid: number): Promise<number> {
  const a = cpuTicks(pid);
  await sleep(seconds * 1000);
  return (cpuTicks(pid) - a) / TICKS / seconds;
}

if (fleet > 0) await attachFleet(fleet);
else await embedded();

async function embedded(): Promise<void> {
  console.log(
    `node ${process.version}; ${seconds} s per figure after 8 s of warm-up; colour ${color ? 'on' : 'off'}; the embedded default with --worker-queue-limit 6`,
  );
  console.log('');
  console.log('| terminal | serve console, % of a core | top console (2 updates/s), % of a core |');
  console.log('|---|---:|---:|');
  const figures: Record<string, number> = { seconds };
  const goals: GoalVerdict[] = [];
  for (const [x, y] of sizes) {
    const server = `rctl-cpu-${process.pid}-${x}`;
    const tmux = (...a: string[]): string => execFileSync('tmux', ['-L', server, ...a], { encoding: 'utf8' });
    try {
      openPane(tmux, 'serve', x, y, `${env} ${process.execPath} ${ROUTERCTL_BIN} serve --worker-queue-limit 6 --port 0; sleep 600`);
      let url = '';
      for (let i = 0; i < 60 && url === ''; i++) {
        await sleep(250);
        url = /(127\.0\.0\.1:\d+)\s*$/m.exec(tmux('capture-pane', '-p', '-t', 'serve').split('\n')[0] ?? '')?.[1] ?? '';
      }
      if (url === '') throw new Error('serve did not come up');
      const pane = panePid(tmux, 'serve');
      const consolePid = children(pane)[0]!;
      openPane(tmux, 'top', x, y, `${env} ${process.execPath} ${ROUTERCTL_BIN} top --url http://${url}; sleep 600`);
      await sleep(8000);
      const topPid = children(panePid(tmux, 'top'))[0]!;
      const [s, t] = await Promise.all([share(consolePid), share(topPid)]);
      console.log(`| ${x}×${y} | ${(100 * s).toFixed(1)} % | ${(100 * t).toFixed(1)} % |`);
      const serveCpu = Number((100 * s).toFixed(1));
      const topCpu = Number((100 * t).toFixed(1));
      Object.assign(figures, { [`serve_${x}x${y}_cpu_pct`]: serveCpu, [`top_${x}x${y}_cpu_pct`]: topCpu });
      if (x === 200 && y === 60) {
        goals.push(atMost("serve's console at 200×60 (% of a core)", serveCpu, 15, ' %'));
        goals.push(atMost("top's console at 200×60 (% of a core)", topCpu, 15, ' %'));
      }
    } finally {
      spawnSync('tmux', ['-L', server, 'kill-server']);
      await sleep(1000);
    }
  }
  writeResult('console-cpu', {
    figures,
    goals,
    bottleneck: "not a rate: the machine's cores are shared by the router, the engines and both consoles",
  });
}

/** `top` attached to a built router in front of `workers` stub workers, at each size. */
async function attachFleet(workers: number): Promise<void> {
  const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
  const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-console-cpu-'));
  const upstream = await startProcess([here('./support/fast-upstream.js'), String(workers)], /^(http:\/\/.+)$/m);
  const rc = path.join(dir, 'routerrc.json');
  writeFileSync(rc, JSON.stringify({ 'worker-urls': upstream.out.trim().split(' ') }));
  // A router that does not come up must not leave the stub behind.
  const router = await startProcess(
    [ROUTERCTL_BIN, 'serve', '--no-tui', '--port', '0', '--config', rc, '--worker-queue-limit', '6'],
    /^(http:\/\/\S+)$/m,
  ).catch(async (err: unknown) => {
    await stopProcess(upstream.child);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const url = router.out.trim();
  console.log(
    `node ${process.version}; ${seconds} s per figure after 8 s of warm-up; colour ${color ? 'on' : 'off'}; top attached to a router in front of ${workers} stub workers`,
  );
  console.log('');
  console.log(`| terminal | top console (1 update/s, its default), % of a core | its router, % of a core |`);
  console.log('|---|---:|---:|');
  const figures: Record<string, number> = { seconds, workers };
  const goals: GoalVerdict[] = [];
  try {
    // Let introspection and the first polls settle before the console attaches.
    await sleep(3000);
    for (const [x, y] of sizes) {
      const server = `rctl-cpu-${process.pid}-${x}`;
      const tmux = (...a: string[]): string => execFileSync('tmux', ['-L', server, ...a], { encoding: 'utf8' });
      try {
        openPane(tmux, 'top', x, y, `${env} ${process.execPath} ${ROUTERCTL_BIN} top --url ${url}; sleep 600`);
        await sleep(8000);
        const topPid = children(panePid(tmux, 'top'))[0]!;
        const [t, r] = await Promise.all([share(topPid), share(router.child.pid!)]);
        const topCpu = Number((100 * t).toFixed(1));
        const routerCpu = Number((100 * r).toFixed(1));
        console.log(`| ${x}×${y} | ${topCpu} % | ${routerCpu} % |`);
        Object.assign(figures, { [`top_${x}x${y}_cpu_pct`]: topCpu, [`router_${x}x${y}_cpu_pct`]: routerCpu });
        if (x === 200 && y === 60)
          goals.push(atMost(`top's console at 200×60 attached to ${workers} workers (% of a core)`, topCpu, 15, ' %'));
      } finally {
        spawnSync('tmux', ['-L', server, 'kill-server']);
        await sleep(1000);
      }
    }
  } finally {
    await stopProcess(router.child, 'SIGINT');
    await stopProcess(upstream.child);
    rmSync(dir, { recursive: true, force: true });
  }
  for (const g of goals) console.log(`${g.met ? 'met' : 'NOT met'}: ${g.claim}: ${g.figure} (goal ${g.goal})`);
  writeResult('console-cpu-fleet', {
    figures,
    goals,
    bottleneck: "not a rate: the router polling the fleet and the console share the machine's 2 cores",
  });
}
