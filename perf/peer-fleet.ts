/**
 * Thousands of workers behind each router that accepts them
 * (docs/peers.md §Peer routers): routerctl (`cache_aware`, gate at 6), the Shepherd Model Gateway and the
 * vLLM router (`cache_aware`, their defaults otherwise), in turn, in front of the same
 * loopback fleet the `fleet-scale` benchmark uses (one fast stub process answering on
 * every port: perf/support/fast-upstream.ts), read by the same probes
 * (perf/support/fleet-probe.ts). Per router and fleet size:
 * - start: from spawning to every worker counted ready (routerctl: its /admin/state,
 *   every worker healthy; the peers: their /readiness, `healthy_workers` = N);
 * - idle CPU over 10 s, 3 s after that (each router's own polling and health checks);
 * - short chats at 8 connections for `--seconds` after a first run of the same length
 *   (which opens connections across the fleet): p50 and p99;
 * - `/metrics` by curl after that traffic (median of 5, and the first) and its size;
 * - resident memory.
 *
 *   npm run perf -- peers-fleet [--workers 1024,4096] [--seconds 8]
 *
 * Unpinned, as `fleet-scale` is: the router, the stub and wrk share the machine's cores.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArg } from './support/args.js';
import { HAS_WRK, cpuSeconds, latency, rssMiB, timed } from './support/fleet-probe.js';
import { PEER_ROUTER_NAMES, peerRouterMissing, peerRouterVersion, startPeerRouter } from '../src/bench/index.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { writeResult } from './support/results.js';
import type { Figures } from './support/results.js';

const SIZES = benchArg('workers', '1024,4096').split(',').map(Number);
const SECONDS = Number(benchArg('seconds', '8'));
const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));

const missing = PEER_ROUTER_NAMES.map((n) => peerRouterMissing(n)).filter((m): m is string => m !== null);
for (const m of missing) console.log(`left out: ${m}`);
const peerNames = PEER_ROUTER_NAMES.filter((n) => peerRouterMissing(n) === null);

interface Started {
  readonly url: string;
  readonly metricsUrl: string;
  readonly child: ChildProcess;
  readonly startS: number;
  close(): Promise<void>;
}

/** routerctl, ready when its /admin/state has every worker healthy. */
async function startRouterctl(urls: string[], dir: string): Promise<Started> {
  const rc = path.join(dir, `routerrc-${urls.length}.json`);
  writeFileSync(rc, JSON.stringify({ 'worker-urls': urls }));
  const t0 = performance.now();
  const r = await startProcess(
    [ROUTERCTL_BIN, 'serve', '--no-tui', '--port', '0', '--config', rc, '--policy', 'cache_aware', '--worker-queue-limit', '6'],
    /^(http:\/\/\S+)$/m,
  );
  const url = r.out.trim();
  for (;;) {
    const state = (await (await fetch(`${url}/admin/state`)).json()) as { workers: Array<{ healthy: boolean }> };
    if (state.workers.length === urls.length && state.workers.every((w) => w.healthy)) break;
    await new Promise((x) => setTimeout(x, 100));
  }
  return { url, metricsUrl: url, child: r.child, startS: (performance.now() - t0) / 1000, close: () => stopProcess(r.child) };
}

async function start(name: string, urls: string[], dir: string): Promise<Started> {
  if (name === 'routerctl') return startRouterctl(urls, dir);
  const t0 = performance.now();
  const p = await startPeerRouter(name as (typeof PEER_ROUTER_NAMES)[number], { workerUrls: urls, readyTimeoutMs: 300_000 });
  return { url: p.url, metricsUrl: p.metricsUrl, child: p.child, startS: (performance.now() - t0) / 1000, close: () => p.close() };
}

const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-peers-fleet-'));
const figures: Figures = {
  seconds: SECONDS,
  workers: SIZES.join(','),
  ...Object.fromEntries(peerNames.map((n) => [`${n}_version`, peerRouterVersion(n)])),
  left_out: missing.length > 0 ? missing.join('; ') : null,
};
try {
  console.log(
    `node ${process.version}; client ${HAS_WRK ? 'wrk -t1 -c8' : 'undici, 8 connections (wrk not installed)'}; ${SECONDS} s per latency run; unpinned`,
  );
  console.log('');
  console.log('| workers | router | start | idle CPU | p50 at 8 | p99 at 8 | req/s at 8 | /metrics (first) | /metrics size | memory |');
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [i, workers] of SIZES.entries()) {
    const upstream = await startProcess([here('./support/fast-upstream.js'), String(workers)], /^(http:\/\/.+)$/m);
    const urls = upstream.out.trim().split(' ');
    const routers = ['routerctl', ...peerNames];
    try {
      for (const name of i % 2 === 0 ? routers : [...routers].reverse()) {
        const r = await start(name, urls, dir);
        try {
          await new Promise((x) => setTimeout(x, 3000));
          const c0 = cpuSeconds(r.child.pid!);
          await new Promise((x) => setTimeout(x, 10_000));
          const idle = (cpuSeconds(r.child.pid!) - c0) / 10;
          await latency(r.url, dir, SECONDS);
          const lat = await latency(r.url, dir, SECONDS);
          const metrics = await timed(`${r.metricsUrl}/metrics`);
          const rss = rssMiB(r.child.pid!);
          const key = `${workers}_${name}`;
          Object.assign(figures, {
            [`${key}_start_s`]: Number(r.startS.toFixed(1)),
            [`${key}_idle_core`]: Number(idle.toFixed(3)),
            [`${key}_p50_ms`]: Number(lat.p50.toFixed(3)),
            [`${key}_p99_ms`]: Number(lat.p99.toFixed(3)),
            [`${key}_rps`]: Math.round(lat.rps),
            [`${key}_metrics_ms`]: metrics.ms,
            [`${key}_metrics_first_ms`]: metrics.first_ms,
            [`${key}_metrics_bytes`]: metrics.bytes,
            [`${key}_rss_mib`]: Math.round(rss),
          });
          console.log(
            `| ${workers} | ${name} | ${r.startS.toFixed(1)} s | ${(idle * 100).toFixed(1)} % | ${lat.p50.toFixed(2)} ms | ${lat.p99.toFixed(2)} ms | ` +
              `${Math.round(lat.rps)} | ${metrics.ms} ms (${metrics.first_ms}) | ${(metrics.bytes / 1024).toFixed(0)} KB | ${Math.round(rss)} MiB |`,
          );
        } finally {
          await r.close();
        }
      }
    } finally {
      await stopProcess(upstream.child);
    }
  }
  console.log('');
  console.log(
    "Idle CPU is a share of one core (all the process's threads). What each router does while idle differs: see docs/peers.md §Peer routers.",
  );
  writeResult('peers-fleet', {
    figures,
    bottleneck: 'unpinned: each router, the one stub process and wrk share 2 cores; idle CPU is the router alone with the stub answering',
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
