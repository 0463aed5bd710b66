/**
 * The router's own cost on the request path, against a bare undici pass-through proxy
 * (perf/support/bare-proxy.ts), in front of upstreams that cost almost nothing
 * (perf/support/fast-upstream.ts), driven by a client in its own process: wrk when it
 * is installed, else an undici client (perf/support/load-client.ts).
 *
 *   npm run perf -- overhead [--seconds 4] [--connections 32] [--rounds 3]
 *                             [--sizes short,16k,400k] [--policy cache_aware] [--ramp 64,256,1024]
 *                             [--router-args "--decision-log-size 0"] [--pin on|off]
 *                             [--bare-api request|dispatch|pool] [--router-node-flags "..."]
 *
 * With `--pin on` (the default where taskset exists and the machine has two cores or
 * more) the proxy under test runs alone on the last core and the upstream and the
 * client share the others: on a 2-core machine, unpinned, four busy processes take
 * turns on two cores and one 4-second round can differ from the next by 2×.
 *
 * Rounds alternate the targets so that drift hits them alike; each ramp step is warmed
 * for a second before it is measured. `--sizes ""` runs the ramp alone. Every process's CPU is
 * read from /proc over each run, and pinned, how busy the cores the upstream and the
 * client share were: a run whose upstream or client used (nearly) a whole core, or
 * whose shared cores were (nearly) full, measured them, not the proxy, and the table
 * says so instead of giving a ratio. The ramp also gives each proxy's CPU per request,
 * user space and kernel apart. Everything shares one machine's cores, so read the ratios.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemPrompt } from '../src/workload/index.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { benchArg, benchWords } from './support/args.js';
import { atLeast, atMost, writeResult } from './support/results.js';
import type { Figures, GoalVerdict } from './support/results.js';

const seconds = Number(benchArg('seconds', '4'));
const connections = Number(benchArg('connections', '32'));
const rounds = Number(benchArg('rounds', '3'));
const sizes = benchArg('sizes', 'short,16k,400k').split(',').filter(Boolean);
const policy = benchArg('policy', 'cache_aware');
const ramp = benchArg('ramp', '').split(',').filter(Boolean).map(Number);
/** Extra serve flags, e.g. to measure a feature against its absence. */
const extraRouterArgs = benchWords('router-args');
/** Node flags for the router's process (`--allocation-site-pretenuring` keeps V8's pretenuring on: src/serve/young-generation.ts). */
const routerNodeFlags = benchWords('router-node-flags');
/** Which bare proxy to measure against (perf/support/bare-proxy.ts): undici's request() and pipeline, its dispatch, or the router's own pool. */
const bareApi = benchArg('bare-api', 'request');
if (bareApi !== 'request' && bareApi !== 'dispatch' && bareApi !== 'pool')
  throw new Error(`--bare-api must be request, dispatch or pool, not ${bareApi}`);
const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));

/** Share of one core a process used past this is saturated: it, not the proxy, set the pace. */
const SATURATED = 0.9;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
const HAS_WRK = spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
const CORES = availableParallelism();
const CAN_PIN = CORES >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const pin = benchArg('pin', CAN_PIN ? 'on' : 'off') === 'on';
if (pin && !CAN_PIN) throw new Error('--pin on needs taskset and at least two cores');
/** Cores for the proxy under test (the last one), and for everything else. */
const PROXY_CPUS = pin ? String(CORES - 1) : undefined;
const OTHER_CPUS = pin ? `0-${CORES - 2}` : undefined;
/** The cores the upstream and the client share when pinned. */
const SHARED_CORES = Array.from({ length: CORES - 1 }, (_, i) => i);

/** CPU seconds a process has used so far in user space and in the kernel, from /proc. */
function cpuTimes(pid: number): { user: number; kernel: number } {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: Number(fields[11]) / CLK_TCK, kernel: Number(fields[12]) / CLK_TCK };
  } catch {
    return { user: NaN, kernel: NaN };
  }
}

/** Busy and total ticks of the given cores so far, from /proc/stat (idle and iowait are not busy). */
function coreTicks(cores: number[]): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  try {
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const m = /^cpu(\d+) (.*)$/.exec(line);
      if (!m || !cores.includes(Number(m[1]))) continue;
      const t = m[2]!.trim().split(/\s+/).map(Number);
      const all = t.slice(0, 8).reduce((a, x) => a + x, 0);
      total += all;
      busy += all - t[3]! - t[4]!;
    }
  } catch {
    return { busy: NaN, total: NaN };
  }
  return { busy, total };
}

function cpuSeconds(pid: number): number {
  const t = cpuTimes(pid);
  return t.user + t.kernel;
}

interface Run {
  rps: number;
  p50Ms: number;
  errors: number;
  /** Share of one core over the run, per process name. */
  cpu: Record<string, number>;
  /** Each proxy's CPU per request of this run, in µs, user space and kernel apart (read the one the run drove). */
  perRequestUs: Record<'proxy' | 'router', { user: number; kernel: number }>;
  /**
   * Pinned: how busy the cores the upstream and the client share were, all work on
   * them counted (the kernel's network processing too, which no process is charged for).
   */
  sharedBusy: number;
}

const work = mkdtempSync(path.join(tmpdir(), 'routerctl-overhead-'));

function bodyFile(size: string): string {
  const system = size === 'short' ? '' : systemPrompt(5, 0, size === '16k' ? 4_000 : 100_000);
  const messages = system ? [{ role: 'system', content: system }] : [];
  messages.push({ role: 'user', content: 'Say hello in one word.' });
  const file = path.join(work, `${size}.json`);
  writeFileSync(file, JSON.stringify({ model: 'fast', messages, max_tokens: 8 }));
  return file;
}

const LUA = path.join(work, 'post.lua');
writeFileSync(
  LUA,
  'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nlocal f = io.open(os.getenv("BODY_FILE"), "rb")\nwrk.body = f:read("*a")\nf:close()\n',
);

function parseWrk(out: string): { rps: number; p50Ms: number; errors: number } {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const m = /\s50%\s+([\d.]+)(us|ms|s)\b/.exec(out);
  const p50Ms = m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (sock ? sock.slice(1).reduce((a, x) => a + Number(x), 0) : 0);
  return { rps, p50Ms, errors };
}

/** One client run against `url`, with every named process's CPU share over it. */
async function drive(url: string, file: string, conns: number, secs: number, watch: Record<string, number>): Promise<Run> {
  const target = `${url}/v1/chat/completions`;
  const [client, clientArgs] = HAS_WRK
    ? ['wrk', ['-t1', `-c${conns}`, `-d${secs}s`, '--timeout', '10s', '--latency', '-s', LUA, target]]
    : [process.execPath, [here('./support/load-client.js'), url, file, String(secs), String(conns)]];
  const [cmd, args] = OTHER_CPUS === undefined ? [client, clientArgs] : ['taskset', ['-c', OTHER_CPUS, client, ...clientArgs]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, BODY_FILE: file } });
  const pids: Record<string, number> = { ...watch, client: child.pid! };
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTimes(pid)]));
  const sharedBefore = coreTicks(SHARED_CORES);
  const t0 = performance.now();
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  // Sample the client's CPU just before it exits: /proc forgets it after.
  let clientCpu = NaN;
  const sampler = setInterval(() => {
    const v = cpuSeconds(child.pid!);
    if (Number.isFinite(v)) clientCpu = v;
  }, 100);
  await new Promise<void>((r) => child.once('exit', () => r()));
  clearInterval(sampler);
  const wall = (performance.now() - t0) / 1000;
  const after = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTimes(pid)]));
  const cpu: Record<string, number> = {};
  for (const k of Object.keys(pids))
    cpu[k] = ((k === 'client' ? clientCpu : after[k]!.user + after[k]!.kernel) - before[k]!.user - before[k]!.kernel) / wall;
  const sharedAfter = coreTicks(SHARED_CORES);
  const sharedBusy = pin ? (sharedAfter.busy - sharedBefore.busy) / (sharedAfter.total - sharedBefore.total) : NaN;
  const result = HAS_WRK ? parseWrk(out) : loadClientResult(out);
  const perRequest = (p: 'proxy' | 'router'): { user: number; kernel: number } => ({
    user: ((after[p]!.user - before[p]!.user) * 1e6) / (result.rps * wall),
    kernel: ((after[p]!.kernel - before[p]!.kernel) * 1e6) / (result.rps * wall),
  });
  return { ...result, cpu, sharedBusy, perRequestUs: { proxy: perRequest('proxy'), router: perRequest('router') } };
}

function loadClientResult(out: string): { rps: number; p50Ms: number; errors: number } {
  const j = JSON.parse(out) as { requests: number; errors: number; seconds: number; p50Ms: number };
  return { rps: j.requests / j.seconds, p50Ms: j.p50Ms, errors: j.errors };
}

const upstream = await startProcess([here('./support/fast-upstream.js'), '3'], /^(http:\/\/.+)$/m, OTHER_CPUS);
const upstreams = upstream.out.trim().split(' ');
const proxy = await startProcess([here('./support/bare-proxy.js'), '--api', bareApi, ...upstreams], /^(http:\/\/\S+)$/m, PROXY_CPUS);
const routerArgs = ['serve', '--no-tui', '--port', '0', '--worker-urls', ...upstreams, '--policy', policy, ...extraRouterArgs];
if (policy === 'cache_aware') routerArgs.push('--worker-queue-limit', '64');
const router = await startProcess([...routerNodeFlags, ROUTERCTL_BIN, ...routerArgs], /^(http:\/\/\S+)$/m, PROXY_CPUS);
const pidOf = { upstream: upstream.child.pid!, proxy: proxy.child.pid!, router: router.child.pid! };

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
interface Spread {
  median: number;
  min: number;
  max: number;
}
const spread = (xs: number[]): Spread => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
/** A proxy's CPU per request in one run, user space and kernel together, in µs. */
const cpuUs = (run: Run, p: 'proxy' | 'router'): number => run.perRequestUs[p].user + run.perRequestUs[p].kernel;
/**
 * The router's rate over the bare proxy's, round by round: the two runs of a round are
 * back to back, so a machine that slows down for a while slows both. The median of the
 * rounds' ratios, with their range, is what the table gives; a mean of rates would let
 * one slow round decide.
 */
const pairedRatio = (router: Run[], bare: Run[]): Spread => spread(router.map((r, k) => r.rps / bare[k]!.rps));
/**
 * The bare proxy's CPU per request over the router's, round by round: the rate ratio
 * the two would reach if each were held by its own core alone. It stays a measure of
 * the proxies when something else set the pace of the runs, which the rate ratio does not.
 */
const costRatio = (router: Run[], bare: Run[]): Spread => spread(router.map((r, k) => cpuUs(bare[k]!, 'proxy') / cpuUs(r, 'router')));
const fmtRatio = (r: Spread): string => `${r.median.toFixed(2)}× (${r.min.toFixed(2)}–${r.max.toFixed(2)})`;
const pct = (x: number): string => `${Math.round(x * 100)}%`;
/**
 * What set the pace of these runs instead of the proxy, if anything: the upstream or
 * the client at (nearly) a whole core, or, pinned, the cores they share (nearly) full.
 * Empty when the proxy was the limit.
 */
function pacedBy(runs: Run[]): string[] {
  const most = (p: string): number => Math.max(...runs.map((r) => r.cpu[p] ?? NaN));
  const found = (['upstream', 'client'] as const).filter((p) => most(p) >= SATURATED) as string[];
  const shared = Math.max(...runs.map((r) => r.sharedBusy));
  if (pin && found.length === 0 && shared >= SATURATED)
    found.push(`core${SHARED_CORES.length === 1 ? '' : 's'} ${OTHER_CPUS} (${pct(shared)} busy)`);
  return found;
}
/** A proxy's median CPU per request over its runs: "72 + 25 µs" (user + kernel). */
const perRequestCell = (runs: Run[], p: 'proxy' | 'router'): string =>
  `${median(runs.map((x) => x.perRequestUs[p].user)).toFixed(0)} + ${median(runs.map((x) => x.perRequestUs[p].kernel)).toFixed(0)} µs`;
/** The busiest the shared cores were over these runs, for the tables; empty unpinned. */
const sharedCores = (runs: Run[]): string => (pin ? `, ${pct(Math.max(...runs.map((r) => r.sharedBusy)))}` : '');

const figures: Figures = { bare_api: bareApi, policy, rounds, seconds, connections, pinned: pin };
const goals: GoalVerdict[] = [];
/** The goals were set against the request() bare proxy; against dispatch() the figures are the floor, not a verdict. */
const RATE_GOALS: Record<string, [claim: string, min: number]> = {
  short: ['short prompts: router rate over the bare proxy', 0.9],
  '16k': ['16 KB prompts (4K tokens): router rate over the bare proxy', 0.85],
  '400k': ['100K-token prompts: router rate over the bare proxy', 0.5],
};
const round2 = (x: number): number => Number(x.toFixed(2));

try {
  console.log(
    `node ${process.version}; client ${HAS_WRK ? 'wrk -t1' : 'undici (wrk not installed)'}; ${rounds} alternating rounds of ${seconds} s at ${connections} connections; router --policy ${policy}${extraRouterArgs.length > 0 ? ` ${extraRouterArgs.join(' ')}` : ''}; bare proxy on undici ${bareApi}(); 3 fast upstreams in one process${pin ? `; proxies pinned to core ${PROXY_CPUS}, upstream and client to ${OTHER_CPUS}` : '; not pinned'}`,
  );
  console.log('');
  const sharedHeader = pin ? `, cores ${OTHER_CPUS} busy` : '';
  console.log(
    `| prompt | body | direct upstream | bare undici proxy | routerctl | router / bare, median of rounds (range) | CPU per request, user + kernel: bare, router | bare CPU / router CPU per request (range) | CPU: upstream, client, bare, router${sharedHeader} | p50 at 1 connection: bare, router, added |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---|---:|---|---|');
  for (const size of sizes) {
    const file = bodyFile(size);
    const bytes = readFileSync(file).length;
    const targets = { direct: upstreams[0]!, bare: proxy.out, router: router.out } as const;
    await drive(targets.bare, file, connections, 1, pidOf);
    await drive(targets.router, file, connections, 1, pidOf);
    const runs: Record<keyof typeof targets, Run[]> = { direct: [], bare: [], router: [] };
    for (let k = 0; k < rounds; k++) {
      const order = (k % 2 === 0 ? ['direct', 'bare', 'router'] : ['router', 'bare', 'direct']) as Array<keyof typeof targets>;
      for (const t of order) runs[t].push(await drive(targets[t], file, connections, seconds, pidOf));
    }
    const rps = (t: keyof typeof targets): number => median(runs[t].map((r) => r.rps));
    const cpu = (t: keyof typeof targets, p: string): number => Math.max(...runs[t].map((r) => r.cpu[p] ?? NaN));
    // The router's ratio is honest only if neither the upstream nor the client set the pace of either run.
    const limits = (['bare', 'router'] as const).flatMap((t) => pacedBy(runs[t]).map((p) => `${p} (${t} run)`));
    const ratio = limits.length > 0 ? `n/a: ${[...new Set(limits)].join(', ')} saturated` : fmtRatio(pairedRatio(runs.router, runs.bare));
    const one = {
      bare: await drive(targets.bare, file, 1, Math.min(3, seconds), pidOf),
      router: await drive(targets.router, file, 1, Math.min(3, seconds), pidOf),
    };
    const errs = [...runs.bare, ...runs.router].reduce((a, r) => a + r.errors, 0);
    const rateRatio = limits.length > 0 ? null : round2(pairedRatio(runs.router, runs.bare).median);
    const addedMs = Number((one.router.p50Ms - one.bare.p50Ms).toFixed(3));
    Object.assign(figures, {
      [`${size}_router_over_bare`]: rateRatio,
      [`${size}_bare_cpu_over_router_cpu`]: round2(costRatio(runs.router, runs.bare).median),
      [`${size}_router_rps`]: Math.round(rps('router')),
      [`${size}_bare_rps`]: Math.round(rps('bare')),
      [`${size}_added_p50_ms_at_1_connection`]: addedMs,
      ...(limits.length > 0 ? { [`${size}_paced_by`]: [...new Set(limits)].join(', ') } : {}),
    });
    const goal = RATE_GOALS[size];
    if (bareApi === 'request' && goal !== undefined && rateRatio !== null) goals.push(atLeast(goal[0], rateRatio, goal[1], '×'));
    if (bareApi === 'request' && size === '400k') goals.push(atMost('100K-token prompts: added p50 at one connection', addedMs, 1, ' ms'));
    console.log(
      `| ${size} | ${(bytes / 1024).toFixed(1)} KiB | ${rps('direct').toFixed(0)} | ${rps('bare').toFixed(0)} | ${rps('router').toFixed(0)}${errs > 0 ? ` (${errs} errors)` : ''} | ${ratio} | ` +
        `${perRequestCell(runs.bare, 'proxy')}, ${perRequestCell(runs.router, 'router')} | ${fmtRatio(costRatio(runs.router, runs.bare))} | ` +
        `${pct(cpu('router', 'upstream'))}, ${pct(cpu('router', 'client'))}, ${pct(cpu('bare', 'proxy'))}, ${pct(cpu('router', 'router'))}${sharedCores([...runs.bare, ...runs.router])} | ` +
        `${one.bare.p50Ms.toFixed(3)} ms, ${one.router.p50Ms.toFixed(3)} ms, ${(one.router.p50Ms - one.bare.p50Ms).toFixed(3)} ms |`,
    );
  }
  if (ramp.length > 0) {
    const file = bodyFile('short');
    console.log('');
    console.log(
      `| connections | bare undici proxy | routerctl | router / bare, median of rounds (range) | router p50 | CPU per request, user + kernel: bare, router | CPU: upstream, client, router${sharedHeader} |`,
    );
    console.log('|---:|---:|---:|---:|---:|---|---|');
    // Rounds alternate the targets and walk the ramp in both directions, so that neither
    // the order nor a slow spell of the machine favours one connection count.
    // Warm both proxies first (JIT, pools): the first round's first step would otherwise measure a cold process.
    for (const url of [proxy.out, router.out]) await drive(url, file, ramp[0]!, Math.max(3, seconds), pidOf);
    const byConns = new Map(ramp.map((c) => [c, { bare: [] as Run[], router: [] as Run[] }]));
    /** Steps whose runs something other than the proxies paced. */
    const paced: number[] = [];
    for (let k = 0; k < rounds; k++) {
      for (const c of k % 2 === 0 ? ramp : [...ramp].reverse()) {
        const runs = byConns.get(c)!;
        const order = (k % 2 === 0 ? ['bare', 'router'] : ['router', 'bare']) as Array<'bare' | 'router'>;
        for (const t of order) {
          const url = t === 'bare' ? proxy.out : router.out;
          // One second at this many connections first: the upstream closed the idle
          // connections of the last step (node's 5 s keep-alive), and what is measured is
          // the steady state at N connections, not N connections being opened.
          await drive(url, file, c, 1, pidOf);
          runs[t].push(await drive(url, file, c, seconds, pidOf));
        }
      }
    }
    for (const c of ramp) {
      const { bare, router: r } = byConns.get(c)!;
      const errs = r.reduce((a, x) => a + x.errors, 0);
      const limits = [...new Set([...pacedBy(bare).map((p) => `${p} (bare run)`), ...pacedBy(r).map((p) => `${p} (router run)`)])];
      const ratio = limits.length > 0 ? `n/a: ${limits.join(', ')} saturated` : fmtRatio(pairedRatio(r, bare));
      const most = (p: string): string => pct(Math.max(...r.map((x) => x.cpu[p] ?? NaN)));
      console.log(
        `| ${c} | ${median(bare.map((x) => x.rps)).toFixed(0)} | ${median(r.map((x) => x.rps)).toFixed(0)}${errs > 0 ? ` (${errs} errors)` : ''} | ${ratio} | ` +
          `${median(r.map((x) => x.p50Ms)).toFixed(2)} ms | ${perRequestCell(bare, 'proxy')}, ${perRequestCell(r, 'router')} | ` +
          `${most('upstream')}, ${most('client')}, ${most('router')}${sharedCores([...bare, ...r])} |`,
      );
      if (limits.length > 0) paced.push(c);
    }
    // The goal is the router's own curve: its rate at the most connections over its rate at the fewest, round by round.
    const first = byConns.get(ramp[0]!)!.router;
    const last = byConns.get(ramp.at(-1)!)!.router;
    const firstBare = byConns.get(ramp[0]!)!.bare;
    const lastBare = byConns.get(ramp.at(-1)!)!.bare;
    const own = last.map((x, k) => x.rps / first[k]!.rps);
    const ownBare = lastBare.map((x, k) => x.rps / firstBare[k]!.rps);
    console.log('');
    const ends = [ramp[0]!, ramp.at(-1)!].filter((c) => paced.includes(c));
    if (ends.length > 0)
      console.log(`Not a measure of the proxies' curves: at ${ends.join(' and ')} connections something else set the pace (see the rows).`);
    console.log(
      `At ${ramp.at(-1)} connections over ${ramp[0]}, round by round (median, range): routerctl ${fmtRatio(spread(own))}, bare proxy ${fmtRatio(spread(ownBare))}.`,
    );
    // The same curve read from CPU per request (at the fewest over at the most), which holds even in runs something else paced.
    const costOwn = last.map((x, k) => cpuUs(first[k]!, 'router') / cpuUs(x, 'router'));
    const costOwnBare = lastBare.map((x, k) => cpuUs(firstBare[k]!, 'proxy') / cpuUs(x, 'proxy'));
    const ownMedian = round2(spread(own).median);
    Object.assign(figures, {
      ramp_router_own_rate_most_over_fewest: ownMedian,
      ramp_bare_own_rate_most_over_fewest: round2(spread(ownBare).median),
      ramp_router_own_cpu_fewest_over_most: round2(spread(costOwn).median),
      ramp_connections: ramp.join(','),
    });
    if (ends.length === 0)
      goals.push(atLeast(`ramp: the router keeps its own rate from ${ramp[0]} to ${ramp.at(-1)} connections`, ownMedian, 0.8, '×'));
    console.log(
      `The same from CPU per request (at ${ramp[0]} connections over at ${ramp.at(-1)}): routerctl ${fmtRatio(spread(costOwn))}, bare proxy ${fmtRatio(spread(costOwnBare))}.`,
    );
  }
  console.log('');
  console.log(
    `CPU is the share of one core over the run, the most any round used${pin ? `; cores ${OTHER_CPUS} busy counts all work on the cores the upstream and the client share, the kernel's included` : ''}. ` +
      `A client or upstream at ${pct(SATURATED)} or more${pin ? `, or those cores ${pct(SATURATED)} busy,` : ''} makes that row's ratio not a measure of the proxies.`,
  );
  writeResult('overhead', {
    figures,
    goals,
    bottleneck: 'each proxy alone on its core when pinned; a row whose upstream, client or shared cores saturated has no ratio',
  });
} finally {
  await Promise.all([stopProcess(router.child), stopProcess(proxy.child), stopProcess(upstream.child)]);
  rmSync(work, { recursive: true, force: true });
}
