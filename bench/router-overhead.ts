/**
 * The router's own cost on the request path, against a bare undici pass-through proxy
 * (bench/bare-proxy.ts), in front of upstreams that cost almost nothing
 * (bench/support/fast-upstream.ts), driven by a client in its own process: wrk when it
 * is installed, else an undici client (bench/support/load-client.ts).
 *
 *   npm run bench:overhead -- [--seconds 4] [--connections 32] [--rounds 3]
 *                             [--sizes short,16k,400k] [--policy cache_aware] [--ramp 64,256,1024]
 *                             [--router-args "--decision-log-size 0"] [--pin on|off]
 *                             [--bare-api request|dispatch]
 *
 * With `--pin on` (the default where taskset exists and the machine has two cores or
 * more) the proxy under test runs alone on the last core and the upstream and the
 * client share the others: on a 2-core machine, unpinned, four busy processes take
 * turns on two cores and one 4-second round can differ from the next by 2×.
 *
 * Rounds alternate the targets so that drift hits them alike; each ramp step is warmed
 * for a second before it is measured. `--sizes ""` runs the ramp alone. Every process's CPU is
 * read from /proc over each run: a run whose upstream or client used (nearly) a whole
 * core measured that process, not the proxy, and the table says so instead of giving
 * a ratio. Everything shares one machine's cores, so read the ratios.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemPrompt } from '../src/workload/index.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { benchArg } from './support/args.js';

const seconds = Number(benchArg('seconds', '4'));
const connections = Number(benchArg('connections', '32'));
const rounds = Number(benchArg('rounds', '3'));
const sizes = benchArg('sizes', 'short,16k,400k').split(',').filter(Boolean);
const policy = benchArg('policy', 'cache_aware');
const ramp = benchArg('ramp', '').split(',').filter(Boolean).map(Number);
/** Extra serve flags, e.g. to measure a feature against its absence. */
const extraRouterArgs = benchArg('router-args', '').split(/\s+/).filter(Boolean);
/** Which bare proxy to measure against (bench/bare-proxy.ts): request() and pipeline, or dispatch. */
const bareApi = benchArg('bare-api', 'request');
if (bareApi !== 'request' && bareApi !== 'dispatch') throw new Error(`--bare-api must be request or dispatch, not ${bareApi}`);
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

/** CPU seconds a process has used so far (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

interface Run {
  rps: number;
  p50Ms: number;
  errors: number;
  /** Share of one core over the run, per process name. */
  cpu: Record<string, number>;
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
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
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
  const cpu: Record<string, number> = {};
  for (const [k, pid] of Object.entries(pids)) cpu[k] = ((k === 'client' ? clientCpu : cpuSeconds(pid)) - before[k]!) / wall;
  if (HAS_WRK) return { ...parseWrk(out), cpu };
  const j = JSON.parse(out) as { requests: number; errors: number; seconds: number; p50Ms: number };
  return { rps: j.requests / j.seconds, p50Ms: j.p50Ms, errors: j.errors, cpu };
}

const upstream = await startProcess([here('./support/fast-upstream.js'), '3'], /^(http:\/\/.+)$/m, OTHER_CPUS);
const upstreams = upstream.out.trim().split(' ');
const proxy = await startProcess([here('./bare-proxy.js'), '--api', bareApi, ...upstreams], /^(http:\/\/\S+)$/m, PROXY_CPUS);
const routerArgs = ['serve', '--no-tui', '--port', '0', '--worker-urls', ...upstreams, '--policy', policy, ...extraRouterArgs];
if (policy === 'cache_aware') routerArgs.push('--worker-queue-limit', '64');
const router = await startProcess([ROUTERCTL_BIN, ...routerArgs], /^(http:\/\/\S+)$/m, PROXY_CPUS);
const pidOf = { upstream: upstream.child.pid!, proxy: proxy.child.pid!, router: router.child.pid! };

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
/**
 * The router's rate over the bare proxy's, round by round: the two runs of a round are
 * back to back, so a machine that slows down for a while slows both. The median of the
 * rounds' ratios, with their range, is what the table gives; a mean of rates would let
 * one slow round decide.
 */
const pairedRatio = (router: Run[], bare: Run[]): { median: number; min: number; max: number } => {
  const rs = router.map((r, k) => r.rps / bare[k]!.rps);
  return { median: median(rs), min: Math.min(...rs), max: Math.max(...rs) };
};
const fmtRatio = (r: { median: number; min: number; max: number }): string => `${r.median.toFixed(2)}× (${r.min.toFixed(2)}–${r.max.toFixed(2)})`;
const pct = (x: number): string => `${Math.round(x * 100)}%`;

try {
  console.log(`node ${process.version}; client ${HAS_WRK ? 'wrk -t1' : 'undici (wrk not installed)'}; ${rounds} alternating rounds of ${seconds} s at ${connections} connections; router --policy ${policy}${extraRouterArgs.length > 0 ? ` ${extraRouterArgs.join(" ")}` : ""}; bare proxy on undici ${bareApi}(); 3 fast upstreams in one process${pin ? `; proxies pinned to core ${PROXY_CPUS}, upstream and client to ${OTHER_CPUS}` : '; not pinned'}`);
  console.log('');
  console.log('| prompt | body | direct upstream | bare undici proxy | routerctl | router / bare, median of rounds (range) | CPU: upstream, client, bare, router | p50 at 1 connection: bare, router, added |');
  console.log('|---|---:|---:|---:|---:|---:|---|---|');
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
    const limits = (['bare', 'router'] as const).flatMap((t) => (['upstream', 'client'] as const).filter((p) => cpu(t, p) >= SATURATED).map((p) => `${p} (${t} run)`));
    const ratio = limits.length > 0 ? `n/a: ${[...new Set(limits)].join(', ')} saturated` : fmtRatio(pairedRatio(runs.router, runs.bare));
    const one = { bare: await drive(targets.bare, file, 1, Math.min(3, seconds), pidOf), router: await drive(targets.router, file, 1, Math.min(3, seconds), pidOf) };
    const errs = [...runs.bare, ...runs.router].reduce((a, r) => a + r.errors, 0);
    console.log(
      `| ${size} | ${(bytes / 1024).toFixed(1)} KiB | ${rps('direct').toFixed(0)} | ${rps('bare').toFixed(0)} | ${rps('router').toFixed(0)}${errs > 0 ? ` (${errs} errors)` : ''} | ${ratio} | ` +
        `${pct(cpu('router', 'upstream'))}, ${pct(cpu('router', 'client'))}, ${pct(cpu('bare', 'proxy'))}, ${pct(cpu('router', 'router'))} | ` +
        `${one.bare.p50Ms.toFixed(3)} ms, ${one.router.p50Ms.toFixed(3)} ms, ${(one.router.p50Ms - one.bare.p50Ms).toFixed(3)} ms |`,
    );
  }
  if (ramp.length > 0) {
    const file = bodyFile('short');
    console.log('');
    console.log('| connections | bare undici proxy | routerctl | router / bare, median of rounds (range) | router p50 | CPU: client, router |');
    console.log('|---:|---:|---:|---:|---:|---|');
    // Rounds alternate the targets and walk the ramp in both directions, so that neither
    // the order nor a slow spell of the machine favours one connection count.
    const byConns = new Map(ramp.map((c) => [c, { bare: [] as Run[], router: [] as Run[] }]));
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
      console.log(
        `| ${c} | ${median(bare.map((x) => x.rps)).toFixed(0)} | ${median(r.map((x) => x.rps)).toFixed(0)}${errs > 0 ? ` (${errs} errors)` : ''} | ${fmtRatio(pairedRatio(r, bare))} | ` +
          `${median(r.map((x) => x.p50Ms)).toFixed(2)} ms | ${pct(Math.max(...r.map((x) => x.cpu.client!)))}, ${pct(Math.max(...r.map((x) => x.cpu.router!)))} |`,
      );
    }
    // The goal is the router's own curve: its rate at the most connections over its rate at the fewest, round by round.
    const first = byConns.get(ramp[0]!)!.router;
    const last = byConns.get(ramp.at(-1)!)!.router;
    const own = last.map((x, k) => x.rps / first[k]!.rps);
    const ownBare = byConns.get(ramp.at(-1)!)!.bare.map((x, k) => x.rps / byConns.get(ramp[0]!)!.bare[k]!.rps);
    console.log('');
    console.log(
      `At ${ramp.at(-1)} connections over ${ramp[0]}, round by round (median, range): routerctl ${median(own).toFixed(2)}× (${Math.min(...own).toFixed(2)}–${Math.max(...own).toFixed(2)}), ` +
        `bare proxy ${median(ownBare).toFixed(2)}× (${Math.min(...ownBare).toFixed(2)}–${Math.max(...ownBare).toFixed(2)}).`,
    );
  }
  console.log('');
  console.log(`CPU is the share of one core over the run, the most any round used. A client or upstream at ${pct(SATURATED)} or more makes that row's ratio not a measure of the proxies.`);
} finally {
  await Promise.all([stopProcess(router.child), stopProcess(proxy.child), stopProcess(upstream.child)]);
  rmSync(work, { recursive: true, force: true });
}
