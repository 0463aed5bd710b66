/**
 * An idle router in front of 4,096 SGLang workers that publish their load by push
 * (LoadStat over ZMQ, a heartbeat per worker each second), against the same fleet
 * with push off, polled (docs/engine-load.md §Load by push). One stub process
 * (perf/support/fast-push-upstream.ts) is the whole fleet, or as much of it as its
 * descriptor limit allows (then several share it). The router is the built
 * `routerctl serve --no-tui --worker-queue-limit 6`, learning the push channels from
 * each worker's `/server_info` as it would from SGLang's. Measured, once every worker
 * is fresh (and, with push, fed by push):
 * - the router's CPU from /proc over `--windows` windows of 10 s (the spread says how
 *   much the 2 shared cores moved it), and the stub's beside it;
 * - the router's resident memory;
 * - every worker fresh, and with push `load_source` push, in /admin/state after the
 *   windows too.
 *
 * Thousands of ZMQ sockets need more descriptors than a default `ulimit -n`: the
 * benchmark raises its own limit (children inherit it) when it may.
 *
 * `--profile DIR`: the router runs under `--cpu-prof` and leaves its profile in DIR,
 * with the measuring windows' spans beside it (`windows-push.txt`, CLOCK_MONOTONIC
 * microseconds) for perf/support/cpu-profile-top.ts to read the windows' self times
 * without the start-up. `--floor` adds a row (its CPU in the router's column, the
 * sender's in the stub's): what Node itself costs for the same traffic
 * (perf/support/tcp-floor.ts), a process holding as many loopback TCP connections,
 * each bringing a message of `--bytes` a second, read with `onread` into one shared
 * buffer and nothing else: the floor under the push figure.
 *
 * `--router-node-flags "..."` passes node flags to the router (`--perf-basic-prof-only-functions`
 * names its JIT code for `perf record -p`); `--router-stdout FILE` keeps what it prints
 * after its URL (`--trace-gc`'s lines). `--perf-record FILE` samples the router with
 * Linux `perf record -g` over the push run's windows exactly (and adds the flag that
 * names its JIT code): JavaScript, Node's C++ and the kernel in one profile, where
 * `--profile` sees only what V8 attributes.
 *
 *   npm run perf -- fleet-push [--workers 4096] [--windows 5] [--no-poll] [--prefix-source events] [--profile DIR]
 *     [--router-node-flags "..."] [--router-stdout FILE] [--perf-record FILE] [--floor [--bytes 60] [--floor-tick-ms 10]]
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { benchArg, benchWords } from './support/args.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { atMost, writeResult } from './support/results.js';
import type { Figures, GoalVerdict } from './support/results.js';

const WORKERS = Number(benchArg('workers', '4096'));
const WINDOWS = Math.max(1, Number(benchArg('windows', '5')));
const WITH_POLL = !process.argv.includes('--no-poll');
/** `events`: the router subscribes to every worker's KV events too (by default it keys prefixes by requests, and does not). */
const PREFIX_SOURCE = benchArg('prefix-source', '');
const PROFILE_DIR = benchArg('profile', '');
/** Node flags for the router, space-separated (e.g. `--perf-basic-prof-only-functions`, for `perf record -p` over the windows). */
const ROUTER_NODE_FLAGS = benchWords('router-node-flags');
/** Where the router's stdout goes after its URL (e.g. what `--trace-gc` prints); nowhere by default. */
const ROUTER_STDOUT = benchArg('router-stdout', '');
/** Where `perf record` leaves its samples of the push run's windows; none by default. */
const PERF_RECORD = benchArg('perf-record', '');
const FLOOR = process.argv.includes('--floor');
/** The floor's message: a LoadStat heartbeat in its ZMTP envelope is 38 bytes; a larger one costs the kernel no more work. */
const FLOOR_BYTES = Number(benchArg('bytes', '60'));
/** How often the floor's sender writes its share of the second: 10 ms, as the stub ticks; 1 ms wakes the reader about as often as the stub's ZMQ sockets wake the router. */
const FLOOR_TICK_MS = benchArg('floor-tick-ms', '10');
const WINDOW_S = 10;
const SETTLE_AFTER_FRESH_MS = 30_000;
const SETTLE_TIMEOUT_MS = 120_000;
const WANT_NOFILE = 65_536;
const STUB_FDS_PER_WORKER = 10;
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const TICKS = 100; // USER_HZ on Linux

function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}
const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const openFiles = (): number => Number(/Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? NaN);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round1 = (x: number): number => Number(x.toFixed(1));

/** Raise this process's descriptor limit (soft and hard) for the children it starts; the limit in force after. */
function raiseOpenFiles(): number {
  if (openFiles() < WANT_NOFILE) spawnSync('prlimit', ['--pid', String(process.pid), `--nofile=${WANT_NOFILE}:${WANT_NOFILE}`]);
  return openFiles();
}

/**
 * How many workers each stub process serves. A pushing worker takes about 10 of the
 * stub's descriptors (its HTTP listener and connections, two ZMQ sockets with their
 * listeners, connections and signalling descriptors): past what one process may open,
 * the fleet is split over several stubs, which changes nothing the router sees.
 */
function stubShares(workers: number): number[] {
  const perProcess = Math.max(1, Math.floor((openFiles() - 512) / STUB_FDS_PER_WORKER));
  const processes = Math.ceil(workers / perProcess);
  return Array.from({ length: processes }, (_, i) => Math.floor(workers / processes) + (i < workers % processes ? 1 : 0));
}

interface Freshness {
  workers: number;
  fresh: number;
  pushed: number;
  /** Workers whose KV events the router subscribed to. */
  kvFeeds: number;
}

async function freshness(url: string): Promise<Freshness> {
  const res = await request(`${url}/admin/state`);
  const doc = (await res.body.json()) as { workers: Array<{ fresh: boolean; load_source: string; kv_events: object | null }> };
  return {
    workers: doc.workers.length,
    fresh: doc.workers.filter((w) => w.fresh).length,
    pushed: doc.workers.filter((w) => w.load_source === 'push').length,
    kvFeeds: doc.workers.filter((w) => w.kv_events !== null).length,
  };
}

/** Wait until every worker is fresh (and pushed, when `push`); the seconds it took. */
async function settle(url: string, workers: number, push: boolean): Promise<{ seconds: number; last: Freshness }> {
  const t0 = performance.now();
  let last: Freshness = { workers: 0, fresh: 0, pushed: 0, kvFeeds: 0 };
  while (performance.now() - t0 < SETTLE_TIMEOUT_MS) {
    last = await freshness(url).catch(() => last);
    if (last.workers === workers && last.fresh === workers && (!push || last.pushed === workers)) break;
    await sleep(1000);
  }
  return { seconds: round1((performance.now() - t0) / 1000), last };
}

const monotonicUs = (): bigint => process.hrtime.bigint() / 1000n;

/** `pid`'s CPU (and `otherCpu`'s beside it) over WINDOWS windows: median, spread, each window; and the windows' spans. */
async function cpuWindows(pid: number, otherCpu: () => number): Promise<{ figures: Figures; spans: string }> {
  const routerPct: number[] = [];
  const otherPct: number[] = [];
  let spans = '';
  for (let i = 0; i < WINDOWS; i++) {
    const [r0, s0, t0, m0] = [cpuSeconds(pid), otherCpu(), performance.now(), monotonicUs()];
    await sleep(WINDOW_S * 1000);
    const wall = (performance.now() - t0) / 1000;
    routerPct.push(round1((100 * (cpuSeconds(pid) - r0)) / wall));
    otherPct.push(round1((100 * (otherCpu() - s0)) / wall));
    spans += `${m0} ${monotonicUs()}\n`;
  }
  const sorted = [...routerPct].sort((a, b) => a - b);
  return {
    figures: {
      idle_core_pct: sorted[Math.floor(sorted.length / 2)]!,
      idle_core_pct_min: sorted[0]!,
      idle_core_pct_max: sorted[sorted.length - 1]!,
      idle_core_pct_windows: routerPct.join(' '),
      stub_core_pct_windows: otherPct.join(' '),
    },
    spans,
  };
}

/**
 * The floor (perf/support/tcp-floor.ts): Node reading WORKERS loopback connections,
 * a message a second each, into one shared buffer and doing nothing else.
 */
async function measureFloor(): Promise<Figures> {
  const sender = await startProcess(
    [here('./support/tcp-floor.js'), 'send', String(WORKERS), '--bytes', String(FLOOR_BYTES), '--tick-ms', FLOOR_TICK_MS],
    /^(\d+)$/m,
  );
  try {
    const receiver = await startProcess([here('./support/tcp-floor.js'), 'receive', sender.out.trim(), String(WORKERS)], /^(ready)$/m);
    try {
      // As for the router: connection set-up out of the way first.
      await sleep(5_000);
      const w = await cpuWindows(receiver.child.pid!, () => cpuSeconds(sender.child.pid!));
      return {
        mode: 'floor',
        bytes: FLOOR_BYTES,
        tick_ms: Number(FLOOR_TICK_MS),
        ...w.figures,
        rss_mib: Math.round(rssMiB(receiver.child.pid!)),
      };
    } finally {
      await stopProcess(receiver.child);
    }
  } finally {
    await stopProcess(sender.child);
  }
}

async function measure(push: boolean, dir: string): Promise<Figures> {
  const stubs = await Promise.all(
    stubShares(WORKERS).map((n) =>
      startProcess([here('./support/fast-push-upstream.js'), String(n), ...(push ? [] : ['--poll'])], /^(http:\/\/.+)$/m),
    ),
  );
  const urls = stubs.flatMap((s) => s.out.trim().split(' '));
  const rc = path.join(dir, `routerrc-${push ? 'push' : 'poll'}.json`);
  writeFileSync(rc, JSON.stringify({ 'worker-urls': urls }));
  const perfRecord = push && PERF_RECORD !== '';
  const profiled = [
    ...ROUTER_NODE_FLAGS,
    ...(perfRecord && !ROUTER_NODE_FLAGS.includes('--perf-basic-prof-only-functions') ? ['--perf-basic-prof-only-functions'] : []),
    ...(PROFILE_DIR === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', path.resolve(PROFILE_DIR)]),
  ];
  const router = await startProcess(
    [
      ...profiled,
      ROUTERCTL_BIN,
      'serve',
      '--no-tui',
      '--port',
      '0',
      '--config',
      rc,
      '--worker-queue-limit',
      '6',
      ...(PREFIX_SOURCE === '' ? [] : ['--prefix-source', PREFIX_SOURCE]),
    ],
    /^(http:\/\/\S+)$/m,
  );
  const url = router.out.trim();
  if (ROUTER_STDOUT !== '') router.child.stdout!.on('data', (c: Buffer) => appendFileSync(ROUTER_STDOUT, c));
  const pid = router.child.pid!;
  const stubCpu = (): number => stubs.reduce((sum, s) => sum + cpuSeconds(s.child.pid!), 0);
  try {
    const settled = await settle(url, WORKERS, push);
    // Start-up's last work out of the way: introspection, the first polls, the idle
    // keep-alive connections they leave, which the router's HTTP clients close after 10 s,
    // and V8's memory reducer, whose mark-compacts of the start-up heap land some 20 s
    // after the fleet is fresh (--trace-gc): the windows measure the idle router, not
    // its start.
    await sleep(SETTLE_AFTER_FRESH_MS);
    const recorder = perfRecord
      ? spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(pid), '-o', path.resolve(PERF_RECORD)], {
          stdio: 'ignore',
        })
      : undefined;
    recorder?.on('error', (err) => console.error(`perf record did not start (${err.message}): the windows are measured without it`));
    const w = await cpuWindows(pid, stubCpu);
    if (recorder !== undefined && recorder.exitCode === null && recorder.pid !== undefined) {
      const ended = new Promise((r) => recorder.once('exit', r));
      recorder.kill('SIGINT');
      await ended;
    }
    if (PROFILE_DIR !== '') writeFileSync(path.join(PROFILE_DIR, `windows-${push ? 'push' : 'poll'}.txt`), w.spans);
    const after = await freshness(url);
    return {
      mode: push ? 'push' : 'poll',
      stub_processes: stubs.length,
      settle_s: settled.seconds,
      ...w.figures,
      rss_mib: Math.round(rssMiB(pid)),
      workers_seen: after.workers,
      fresh: after.fresh,
      pushed: after.pushed,
      kv_feeds: after.kvFeeds,
    };
  } finally {
    await stopProcess(router.child, 'SIGINT');
    await Promise.all(stubs.map((s) => stopProcess(s.child)));
  }
}

const nofile = raiseOpenFiles();
const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-fleet-push-'));
try {
  console.log(
    `node ${process.version}; ${WORKERS} workers, dp 1; ${WINDOWS} windows of ${WINDOW_S} s; open files ${nofile} (router and stub inherit it); prefix source ${PREFIX_SOURCE || 'the default'}`,
  );
  const runs = [await measure(true, dir), ...(WITH_POLL ? [await measure(false, dir)] : []), ...(FLOOR ? [await measureFloor()] : [])];
  console.log(
    '| load by | stubs | settled in | idle router CPU (median; windows) | stub CPU (windows) | RSS | fresh | by push | KV feeds |',
  );
  console.log('|---|---:|---:|---|---|---:|---:|---:|---:|');
  for (const f of runs) {
    console.log(
      f.mode === 'floor'
        ? `| floor: ${WORKERS} TCP reads, no router | 1 | - | ${f.idle_core_pct} % (${f.idle_core_pct_windows}) | ${f.stub_core_pct_windows} | ${f.rss_mib} MiB | - | - | - |`
        : `| ${f.mode} | ${f.stub_processes} | ${f.settle_s} s | ${f.idle_core_pct} % (${f.idle_core_pct_windows}) | ${f.stub_core_pct_windows} | ${f.rss_mib} MiB | ${f.fresh} / ${f.workers_seen} | ${f.pushed} | ${f.kv_feeds} |`,
    );
  }
  const figures: Figures = { workers: WORKERS, open_files: nofile, prefix_source: PREFIX_SOURCE || 'default' };
  for (const f of runs) for (const [k, v] of Object.entries(f)) if (k !== 'mode') figures[`${f.mode}_${k}`] = v;
  const pushed = runs[0]!;
  const floor = runs.find((f) => f.mode === 'floor');
  if (floor !== undefined) {
    const over = round1(Number(pushed.idle_core_pct) - Number(floor.idle_core_pct));
    figures.push_over_floor_core_pct = over;
    console.log(
      `push: ${over} points of a core over the floor (${round1(Number(pushed.idle_core_pct) / Number(floor.idle_core_pct))}× it)`,
    );
  }
  const goals: GoalVerdict[] =
    WORKERS === 4096
      ? [
          atMost('idle router with 4,096 workers pushing LoadStat', Number(pushed.idle_core_pct), 5, ' % of a core'),
          atMost('workers not fresh by push after the windows', WORKERS - Math.min(Number(pushed.fresh), Number(pushed.pushed)), 0),
        ]
      : [];
  for (const g of goals) console.log(`${g.met ? 'met' : 'NOT met'}: ${g.claim}: ${g.figure} (goal ${g.goal})`);
  writeResult('fleet-push', {
    figures,
    goals,
    bottleneck: 'idle: the router alone on 2 cores shared with the stub (its heartbeats) and whatever else runs',
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
