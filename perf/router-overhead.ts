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
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { benchArg, benchWords } from './support/args.js';
import {
  CAN_PIN,
  HAS_WRK,
  RequestPathRig,
  SATURATED,
  cpuUs,
  fmtRatio,
  median,
  pct,
  perRequestCell,
  round2,
  spread,
} from './support/request-path.js';
import type { Run, Spread } from './support/request-path.js';
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
const rig = new RequestPathRig(benchArg('pin', CAN_PIN ? 'on' : 'off'));
const pin = rig.pin;
const PROXY_CPUS = rig.proxyCpus;
const OTHER_CPUS = rig.otherCpus;
const drive = (url: string, file: string, conns: number, secs: number, watch: Record<string, number>): Promise<Run> =>
  rig.drive(url, file, conns, secs, watch);
const bodyFile = (size: string): string => rig.bodyFile(size);
const pacedBy = (runs: Run[]): string[] => rig.pacedBy(runs);
const sharedCores = (runs: Run[]): string => rig.sharedCoresCell(runs);

const upstream = await startProcess([here('./support/fast-upstream.js'), '3'], /^(http:\/\/.+)$/m, OTHER_CPUS);
const upstreams = upstream.out.trim().split(' ');
const proxy = await startProcess([here('./support/bare-proxy.js'), '--api', bareApi, ...upstreams], /^(http:\/\/\S+)$/m, PROXY_CPUS);
const routerArgs = ['serve', '--no-tui', '--port', '0', '--worker-urls', ...upstreams, '--policy', policy, ...extraRouterArgs];
if (policy === 'cache_aware') routerArgs.push('--worker-queue-limit', '64');
const router = await startProcess([...routerNodeFlags, ROUTERCTL_BIN, ...routerArgs], /^(http:\/\/\S+)$/m, PROXY_CPUS);
const pidOf = { upstream: upstream.child.pid!, proxy: proxy.child.pid!, router: router.child.pid! };

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

const figures: Figures = { bare_api: bareApi, policy, rounds, seconds, connections, pinned: pin };
const goals: GoalVerdict[] = [];
/** The goals were set against the request() bare proxy; against dispatch() the figures are the floor, not a verdict. */
const RATE_GOALS: Record<string, [claim: string, min: number]> = {
  short: ['short prompts: router rate over the bare proxy', 0.9],
  '16k': ['16 KB prompts (4K tokens): router rate over the bare proxy', 0.85],
  '400k': ['100K-token prompts: router rate over the bare proxy', 0.5],
};

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
  rig.close();
}
