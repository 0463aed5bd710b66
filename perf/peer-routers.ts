/**
 * The request path side by side with the routers an operator would pick instead
 * (docs/peers.md §Peer routers): routerctl (`cache_aware`, gate at 6), the Shepherd
 * Model Gateway and the vLLM router (`cache_aware`, their defaults otherwise) and the
 * bare undici proxy, in front of the fast upstreams the `overhead` benchmark uses, on
 * the same rig (perf/support/request-path.ts): each proxy alone on the last core when
 * pinned, the upstream and wrk on the others, rounds alternating the targets.
 *
 *   npm run perf -- peers [--seconds 4] [--connections 32] [--rounds 3] [--sizes short,16k,400k] [--pin on|off]
 *
 * Per prompt size: requests per second at `--connections`, CPU per request, and p50 and
 * p99 added over calling the upstream directly, at one connection (where a proxy's own
 * time is the latency, not a queue), each the median of rounds that alternate the
 * order. A peer that is not installed is left out, named.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { benchArg } from './support/args.js';
import { PEER_ROUTER_NAMES, peerRouterMissing, startPeerRouter } from '../src/bench/index.js';
import type { RunningPeerRouter } from '../src/bench/index.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { CAN_PIN, HAS_WRK, RequestPathRig, cpuUs, median, pct, perRequestCell, round2 } from './support/request-path.js';
import type { Run } from './support/request-path.js';
import { atLeast, atMost, writeResult } from './support/results.js';
import type { Figures, GoalVerdict } from './support/results.js';

const seconds = Number(benchArg('seconds', '4'));
const connections = Number(benchArg('connections', '32'));
const rounds = Number(benchArg('rounds', '3'));
const sizes = benchArg('sizes', 'short,16k,400k').split(',').filter(Boolean);
const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));
const rig = new RequestPathRig(benchArg('pin', CAN_PIN ? 'on' : 'off'));

const missing = PEER_ROUTER_NAMES.map((n) => peerRouterMissing(n)).filter((m): m is string => m !== null);
for (const m of missing) console.log(`left out: ${m}`);
const peerNames = PEER_ROUTER_NAMES.filter((n) => peerRouterMissing(n) === null);

const upstream = await startProcess([here('./support/fast-upstream.js'), '3'], /^(http:\/\/.+)$/m, rig.otherCpus);
const upstreams = upstream.out.trim().split(' ');
const bare = await startProcess([here('./support/bare-proxy.js'), '--api', 'request', ...upstreams], /^(http:\/\/\S+)$/m, rig.proxyCpus);
const routerctlArgs = [
  'serve',
  '--no-tui',
  '--port',
  '0',
  '--worker-urls',
  ...upstreams,
  '--policy',
  'cache_aware',
  '--worker-queue-limit',
  '6',
];
const routerctl = await startProcess([ROUTERCTL_BIN, ...routerctlArgs], /^(http:\/\/\S+)$/m, rig.proxyCpus);
const peers: RunningPeerRouter[] = [];

/** The targets in table order, each with the process whose CPU is its cost. */
interface Target {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
}

try {
  for (const n of peerNames) peers.push(await startPeerRouter(n, { workerUrls: upstreams, cpus: rig.proxyCpus }));
  const targets: Target[] = [
    { name: 'bare', url: bare.out, pid: bare.child.pid! },
    { name: 'routerctl', url: routerctl.out, pid: routerctl.child.pid! },
    ...peers.map((p) => ({ name: p.name, url: p.url, pid: p.child.pid! })),
  ];
  const watch: Record<string, number> = { upstream: upstream.child.pid!, ...Object.fromEntries(targets.map((t) => [t.name, t.pid])) };
  const versions = Object.fromEntries(peers.map((p) => [p.name, p.version]));
  console.log(
    `node ${process.version}; client ${HAS_WRK ? 'wrk -t1' : 'undici (wrk not installed)'}; ${rounds} alternating rounds of ${seconds} s at ${connections} connections; ` +
      `routerctl --policy cache_aware --worker-queue-limit 6; ${peers.map((p) => `${p.name} ${p.version} --policy cache_aware`).join('; ')}; bare proxy on undici request(); ` +
      `3 fast upstreams in one process${rig.pin ? `; proxies pinned to core ${rig.proxyCpus}, upstream and client to ${rig.otherCpus}` : '; not pinned'}`,
  );
  for (const p of peers) console.log(`  ${p.argv.join(' ')}`);
  console.log('');
  console.log(
    `| prompt | body | target | req/s at ${connections} | routerctl / it | CPU per request, user + kernel | added p50 at 1 connection | added p99 at 1 connection | paced by |`,
  );
  console.log('|---|---:|---|---:|---:|---|---:|---:|---|');

  const figures: Figures = {
    rounds,
    seconds,
    connections,
    pinned: rig.pin,
    ...Object.fromEntries(Object.entries(versions).map(([n, v]) => [`${n}_version`, v])),
    left_out: missing.length > 0 ? missing.join('; ') : null,
  };
  const goals: GoalVerdict[] = [];
  for (const size of sizes) {
    const file = rig.bodyFile(size);
    const bytes = readFileSync(file).length;
    for (const t of targets) await rig.drive(t.url, file, connections, 1, watch);
    const runs = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
    for (let k = 0; k < rounds; k++) {
      const order = k % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) runs.get(t.name)!.push(await rig.drive(t.url, file, connections, seconds, watch));
    }
    // Latency at one connection, in rounds of their own: the upstream called directly, then
    // each proxy, the order alternating; what a proxy adds is its figure minus the direct
    // one of the same round, and the table gives the median of the rounds.
    const latencySeconds = Math.min(3, seconds);
    const added = new Map<string, { p50: number[]; p99: number[] }>(targets.map((t) => [t.name, { p50: [], p99: [] }]));
    for (let k = 0; k < rounds; k++) {
      const direct = await rig.drive(upstreams[0]!, file, 1, latencySeconds, watch);
      for (const t of k % 2 === 0 ? targets : [...targets].reverse()) {
        const one = await rig.drive(t.url, file, 1, latencySeconds, watch);
        added.get(t.name)!.p50.push(one.p50Ms - direct.p50Ms);
        added.get(t.name)!.p99.push(one.p99Ms - direct.p99Ms);
      }
    }
    const rps = (n: string): number => median(runs.get(n)!.map((r) => r.rps));
    const ours = runs.get('routerctl')!;
    for (const t of targets) {
      const r = runs.get(t.name)!;
      const paced = [...new Set(rig.pacedBy(r))];
      const errs = r.reduce((a, x) => a + x.errors, 0);
      const addedP50 = median(added.get(t.name)!.p50);
      const addedP99 = median(added.get(t.name)!.p99);
      // routerctl's rate over this target's, round by round (the runs of a round are back to back).
      const ratio = median(ours.map((x, k) => x.rps / r[k]!.rps));
      Object.assign(figures, {
        [`${size}_${t.name}_rps`]: Math.round(rps(t.name)),
        [`${size}_${t.name}_cpu_us_per_request`]: Math.round(median(r.map((x) => cpuUs(x, t.name)))),
        [`${size}_${t.name}_added_p50_ms`]: Number(addedP50.toFixed(3)),
        [`${size}_${t.name}_added_p99_ms`]: Number(addedP99.toFixed(3)),
        ...(t.name !== 'routerctl' ? { [`${size}_routerctl_over_${t.name}`]: round2(ratio) } : {}),
        ...(paced.length > 0 ? { [`${size}_${t.name}_paced_by`]: paced.join(', ') } : {}),
        ...(errs > 0 ? { [`${size}_${t.name}_errors`]: errs } : {}),
      });
      if (peerNames.includes(t.name as never)) {
        goals.push(atLeast(`${size}: routerctl's rate over ${t.name}'s`, round2(ratio), 1, '×'));
        const ourAdded = median(added.get('routerctl')!.p50);
        goals.push(atMost(`${size}: routerctl's added p50 minus ${t.name}'s`, Number((ourAdded - addedP50).toFixed(3)), 0, ' ms'));
      }
      console.log(
        `| ${size} | ${(bytes / 1024).toFixed(1)} KiB | ${t.name} | ${rps(t.name).toFixed(0)}${errs > 0 ? ` (${errs} errors)` : ''} | ` +
          `${t.name === 'routerctl' ? '—' : `${ratio.toFixed(2)}×`} | ${perRequestCell(r, t.name)} | ${addedP50.toFixed(3)} ms | ` +
          `${Number.isFinite(addedP99) ? `${addedP99.toFixed(3)} ms` : '—'} | ${paced.length > 0 ? paced.join(', ') : `no (upstream ${pct(Math.max(...r.map((x) => x.cpu.upstream ?? NaN)))}, client ${pct(Math.max(...r.map((x) => x.cpu.client ?? NaN)))}${rig.sharedCoresCell(r)})`} |`,
      );
    }
  }
  console.log('');
  console.log(
    'CPU per request is the proxy process\'s own (all its threads), median over the rounds. "paced by" names what set the pace instead of the proxy; a row paced by something else is not a measure of the proxy.',
  );
  writeResult('peers', {
    figures,
    goals,
    bottleneck:
      'each proxy alone on its core when pinned, wrk and the upstreams on the others; a row paced by the upstream, the client or the shared cores says so',
  });
} finally {
  await Promise.all([...peers.map((p) => p.close()), stopProcess(routerctl.child), stopProcess(bare.child), stopProcess(upstream.child)]);
  rig.close();
}
