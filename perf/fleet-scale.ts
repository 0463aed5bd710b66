/**
 * A router in front of 4,096 workers against the same router in front of 8: what grows
 * with the fleet. One fast stub process (perf/support/fast-upstream.ts) answers loads
 * and completions on every loopback port, so that no simulator fills the 2 cores. The
 * router is the built `routerctl serve --worker-queue-limit 6`, polling each worker at
 * the default 250 ms, or as often as the sampler's poll budget allows (docs/engine-load.md
 * §Polling a large fleet). Measured:
 * - the router's CPU while idle (from /proc, over 10 s): the load polls' cost;
 * - the added latency of short chats at 8 connections (wrk, or undici without it),
 *   p50 and p99, at 8 and at 4,096 workers, after a first run of the same length has
 *   opened a connection to every worker (the chats miss the prefix index, so they
 *   spread over the whole fleet); then at one connection, p50 to p99.9 and the
 *   longest: what a request meets with nothing queued ahead of it;
 * - `/metrics` and the full default `/admin/state` after that traffic, when every
 *   worker has its request series: time to fetch by curl (median of 5, and the first,
 *   which writes every worker that changed) and size;
 * - `/admin/stream` bytes per event as `top` reads it (deltas), the first and the
 *   largest of all, the most workers one deferred, and how many events and how long
 *   until the console had the whole document (it attaches as the run starts), during a third traffic run with
 *   that stream attached, and that run's p50
 *   and p99: what an attached console adds;
 * - the same traffic through two bare proxies in front of the same fleet, with their
 *   young-generation pauses: one on undici (a Pool per upstream, nothing else), what the
 *   fleet costs any Node proxy on undici; one on the router's own upstream pool, what
 *   it costs the router's client without the router; their growth from 8 workers
 *   printed beside the router's;
 * - the router's resident memory, and its young-generation collections (--trace-gc)
 *   while the measured traffic runs: their count, mean and longest pause.
 *
 * With `--rounds N` the two fleets are measured N times in turn, and each ratio is the
 * median of the rounds' (the house method); a document's time is the slowest round's.
 *
 *   npm run perf -- fleet-scale [--workers 4096] [--seconds 8] [--rounds 1]
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { pollIntervalMs } from '../src/router/index.js';
import { benchArg } from './support/args.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { HAS_CURL, HAS_WRK, cpuSeconds, latency as fleetLatency, rssMiB, timed } from './support/fleet-probe.js';
import { atMost, writeResult } from './support/results.js';
import type { Figures, GoalVerdict } from './support/results.js';

const WORKERS = Number(benchArg('workers', '4096'));
const SECONDS = Number(benchArg('seconds', '8'));
/** Rounds of 8 workers then WORKERS, alternated so that the machine's drift hits both: a ratio is the median of the rounds'. */
const ROUNDS = Math.max(1, Number(benchArg('rounds', '1')));
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const TICKS = 100; // USER_HZ on Linux

/** Busy and total jiffies of the whole machine, from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** Short chats at 8 connections (or `connections`) for SECONDS. */
const latency = (url: string, dir: string, connections = 8): ReturnType<typeof fleetLatency> =>
  fleetLatency(url, dir, SECONDS, connections);

/**
 * The sizes of /admin/stream events as `routerctl top` asks for them (every second, deltas and
 * decision records, src/fleet/replica-client.ts), read until `stop` resolves: the first
 * events are the whole state, a budget's worth each, every later one what changed since.
 */
async function streamEventSizes(url: string, stop: Promise<unknown>): Promise<StreamFigures> {
  const t0 = performance.now();
  const res = await request(`${url}/admin/stream?interval_ms=1000&decisions=1&delta=1`);
  const sizes: number[] = [];
  // The most workers an event had no room for (docs/metrics-and-admin.md §Stream deltas).
  let deferred = 0;
  // When the client had the whole document: past an event's budget the first state events
  // follow one another at once, each deferring the workers still to come, and the first
  // state_delta that defers none ends them (later deltas may defer changed workers again).
  let whole: { ms: number; events: number } | undefined;
  let firstMs = 0;
  let states = 0;
  // Counted as bytes arrive, never joined: this process shares the 2 cores with wrk and
  // the router, and a reader that rescans a growing 5 MB string slows both.
  let bytes = 0;
  let head = '';
  let tail = '';
  let lastByte = 0;
  let done = false;
  void stop.then(() => {
    done = true;
    res.body.destroy();
  });
  try {
    for await (const chunk of res.body) {
      const b = chunk as Buffer;
      let from = 0;
      for (let i = 0; i < b.length; i++) {
        if (head.length < 20) head += String.fromCharCode(b[i]!);
        if (b[i] !== 0x0a || (i > 0 ? b[i - 1] : lastByte) !== 0x0a) continue;
        bytes += i + 1 - from;
        sizes.push(bytes);
        // An event ends `…,"deferred":N}` when some workers waited.
        const end = (tail + b.subarray(Math.max(from, i - 40), i + 1).toString('latin1')).slice(-40);
        const waiting = Number(/"deferred":(\d+)\}\n\n$/.exec(end)?.[1] ?? 0);
        deferred = Math.max(deferred, waiting);
        if (head.startsWith('event: state')) states++;
        if (states === 1 && firstMs === 0) firstMs = performance.now() - t0;
        // The first delta defers none: the first event held it all.
        else if (whole === undefined && head.startsWith('event: state_delta') && waiting === 0)
          whole = states === 2 ? { ms: firstMs, events: 1 } : { ms: performance.now() - t0, events: states };
        bytes = 0;
        head = '';
        tail = '';
        from = i + 1;
      }
      bytes += b.length - from;
      tail = (tail + b.subarray(Math.max(from, b.length - 40)).toString('latin1')).slice(-40);
      lastByte = b[b.length - 1] ?? lastByte;
      if (done) break;
    }
  } catch {
    // destroyed at stop
  }
  return { sizes, deferred, wholeMs: whole?.ms, wholeEvents: whole?.events };
}

interface StreamFigures {
  sizes: number[];
  deferred: number;
  /** From the request to the end of the event that completed the document; undefined if it never did. */
  wholeMs: number | undefined;
  /** State events up to it, the first and the completing one included: 1 when the first held it all (or a single delta completed it). */
  wholeEvents: number | undefined;
}

/** Young-generation pauses a `--trace-gc` child prints while `counting` is on, in ms. */
function scavengeCounter(child: ChildProcess): { counting: boolean; pauses: number[] } {
  const c = { counting: false, pauses: [] as number[] };
  child.stdout!.on('data', (chunk: Buffer) => {
    if (!c.counting) return;
    for (const m of chunk.toString().matchAll(/Scavenge [^,]*MB, ([\d.]+) \//g)) c.pauses.push(Number(m[1]));
  });
  return c;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/**
 * The same traffic through a bare proxy (perf/support/bare-proxy.ts) in front of the
 * same fleet: `dispatch`, an undici Pool per upstream, what the fleet's size costs any
 * Node proxy on undici; `pool`, routerctl's own upstream pool and nothing else of the router.
 */
async function bareProxy(
  urls: string[],
  dir: string,
  api: 'dispatch' | 'pool',
): Promise<{ p50: number; p99: number; scavengeMeanMs: number }> {
  const proxy = await startProcess(['--trace-gc', here('./support/bare-proxy.js'), '--api', api, ...urls], /^(http:\/\/\S+)$/m);
  const gc = scavengeCounter(proxy.child);
  try {
    await latency(proxy.out.trim(), dir);
    gc.counting = true;
    const lat = await latency(proxy.out.trim(), dir);
    return { p50: lat.p50, p99: lat.p99, scavengeMeanMs: mean(gc.pauses) };
  } finally {
    await stopProcess(proxy.child);
  }
}

async function measure(workers: number, dir: string): Promise<Figures> {
  const upstream = await startProcess([here('./support/fast-upstream.js'), String(workers)], /^(http:\/\/.+)$/m);
  const urls = upstream.out.trim().split(' ');
  const bare = await bareProxy(urls, dir, 'dispatch');
  const own = await bareProxy(urls, dir, 'pool');
  const rc = path.join(dir, `routerrc-${workers}.json`);
  writeFileSync(rc, JSON.stringify({ 'worker-urls': urls }));
  // --trace-gc: the young-generation pauses are what a large fleet adds to a request's latency.
  const router = await startProcess(
    ['--trace-gc', ROUTERCTL_BIN, 'serve', '--no-tui', '--port', '0', '--config', rc, '--worker-queue-limit', '6'],
    /^(http:\/\/\S+)$/m,
  );
  const url = router.out.trim();
  const pid = router.child.pid!;
  const gc = scavengeCounter(router.child);
  const scavenges = gc.pauses;
  try {
    // Let introspection and the first polls settle, then read the idle cost.
    await new Promise((r) => setTimeout(r, 3000));
    const c0 = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 10_000));
    const idleCore = (cpuSeconds(pid) - c0) / 10;
    // A first client run warms every worker's connection, as traffic that has run for a while has; the second is measured.
    await latency(url, dir);
    // Who was busy while the client ran: the router, the stub, and the rest (the client, mostly), in cores.
    const [r0, s0, m0, t0] = [cpuSeconds(pid), cpuSeconds(upstream.child.pid!), machineTicks(), performance.now()];
    gc.counting = true;
    const lat = await latency(url, dir);
    const wall = (performance.now() - t0) / 1000;
    gc.counting = false;
    const m1 = machineTicks();
    const routerCores = (cpuSeconds(pid) - r0) / wall;
    const stubCores = (cpuSeconds(upstream.child.pid!) - s0) / wall;
    const machineCores = (m1.busy - m0.busy) / TICKS / wall;
    // One connection: nothing queues in the router, so the tail is what a request meets
    // on its own way (a burst of poll replies, a scavenge), not a queue behind 7 others.
    const lone = await latency(url, dir, 1);
    // Then the same traffic with a console attached: its stream's events, as large as
    // changes make them, and what building them every second adds to the requests.
    const withConsole = latency(url, dir);
    const { sizes: events, deferred, wholeMs, wholeEvents } = await streamEventSizes(url, withConsole);
    const latConsole = await withConsole;
    const sorted = [...events].sort((a, b) => a - b);
    // After traffic, every worker has its request series: the documents are as large as they get.
    const state = await timed(`${url}/admin/state`);
    const metrics = await timed(`${url}/metrics`);
    return {
      workers,
      idle_core_pct: Number((100 * idleCore).toFixed(1)),
      poll_interval_ms: pollIntervalMs(250, workers, 5000),
      poll_us: Number(((idleCore * 1e6) / (workers / (pollIntervalMs(250, workers, 5000) / 1000))).toFixed(1)),
      admin_state_ms: state.ms,
      admin_state_first_ms: state.first_ms,
      admin_state_kb: Math.round(state.bytes / 1024),
      metrics_ms: metrics.ms,
      metrics_first_ms: metrics.first_ms,
      metrics_kb: Math.round(metrics.bytes / 1024),
      stream_first_event_kb: Math.round((events[0] ?? 0) / 1024),
      stream_event_kb: Math.round((sorted[sorted.length - 1] ?? 0) / 1024),
      stream_event_median_kb: Math.round((sorted[Math.floor(sorted.length / 2)] ?? 0) / 1024),
      stream_deferred_max: deferred,
      stream_whole_ms: wholeMs === undefined ? -1 : Math.round(wholeMs),
      stream_whole_events: wholeEvents ?? -1,
      p50_ms: Number(lat.p50.toFixed(2)),
      p99_ms: Number(lat.p99.toFixed(2)),
      p999_ms: Number(lat.p999.toFixed(2)),
      lone_p50_ms: Number(lone.p50.toFixed(2)),
      lone_p99_ms: Number(lone.p99.toFixed(2)),
      lone_p999_ms: Number(lone.p999.toFixed(2)),
      lone_max_ms: Number(lone.max.toFixed(2)),
      bare_p50_ms: Number(bare.p50.toFixed(2)),
      bare_p99_ms: Number(bare.p99.toFixed(2)),
      bare_scavenge_mean_ms: Number(bare.scavengeMeanMs.toFixed(2)),
      own_p50_ms: Number(own.p50.toFixed(2)),
      own_p99_ms: Number(own.p99.toFixed(2)),
      own_scavenge_mean_ms: Number(own.scavengeMeanMs.toFixed(2)),
      console_p50_ms: Number(latConsole.p50.toFixed(2)),
      console_p99_ms: Number(latConsole.p99.toFixed(2)),
      rps: Math.round(lat.rps),
      rss_mib: Math.round(rssMiB(pid)),
      scavenges: scavenges.length,
      scavenge_mean_ms: Number(mean(scavenges).toFixed(2)),
      scavenge_max_ms: Number(Math.max(0, ...scavenges).toFixed(1)),
      scavenge_share_pct: Number(((100 * scavenges.reduce((a, b) => a + b, 0)) / (wall * 1000)).toFixed(1)),
      load_router_cores: Number(routerCores.toFixed(2)),
      load_stub_cores: Number(stubCores.toFixed(2)),
      load_rest_cores: Number(Math.max(0, machineCores - routerCores - stubCores).toFixed(2)),
    };
  } finally {
    await stopProcess(router.child, 'SIGINT');
    await stopProcess(upstream.child);
  }
}

const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-fleet-scale-'));
try {
  console.log(
    `node ${process.version}; client ${HAS_WRK ? 'wrk -t1 -c8' : 'undici, 8 connections (wrk not installed)'}; documents by ${HAS_CURL ? 'curl' : 'undici'}; ${SECONDS} s per latency run; polls every 250 ms`,
  );
  const rounds: Array<{ small: Figures; large: Figures }> = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push({ small: await measure(8, dir), large: await measure(WORKERS, dir) });
  console.log(
    "| round | workers | idle router CPU | each polled every | per poll | p50 / p99 / p99.9 ms | one connection: p50 / p99 / p99.9 / max | with a console: p50 / p99 | bare proxy on undici: p50 / p99, scavenge mean | bare proxy on the router's pool: p50 / p99, scavenge mean | req/s | cores: router / stub / rest | scavenges: n, mean, max ms, share | /admin/state: median, first | /metrics: median, first | stream: first, median, largest event, most deferred, whole after | RSS |",
  );
  console.log('|---:|---:|---:|---:|---:|---|---|---|---|---|---:|---|---|---|---|---|---:|');
  rounds.forEach(({ small, large }, i) => {
    for (const f of [small, large]) {
      console.log(
        `| ${i + 1} | ${f.workers} | ${f.idle_core_pct} % | ${f.poll_interval_ms} ms | ${f.poll_us} µs | ${f.p50_ms} / ${f.p99_ms} / ${f.p999_ms} | ${f.lone_p50_ms} / ${f.lone_p99_ms} / ${f.lone_p999_ms} / ${f.lone_max_ms} | ${f.console_p50_ms} / ${f.console_p99_ms} | ${f.bare_p50_ms} / ${f.bare_p99_ms}, ${f.bare_scavenge_mean_ms} ms | ${f.own_p50_ms} / ${f.own_p99_ms}, ${f.own_scavenge_mean_ms} ms | ${f.rps} | ${f.load_router_cores} / ${f.load_stub_cores} / ${f.load_rest_cores} | ${f.scavenges}, ${f.scavenge_mean_ms}, ${f.scavenge_max_ms}, ${f.scavenge_share_pct} % | ${f.admin_state_ms} ms, ${f.admin_state_first_ms} ms, ${f.admin_state_kb} KB | ${f.metrics_ms} ms, ${f.metrics_first_ms} ms, ${f.metrics_kb} KB | ${f.stream_first_event_kb} KB, ${f.stream_event_median_kb} KB, ${f.stream_event_kb} KB, ${f.stream_deferred_max}, ${f.stream_whole_events} events in ${f.stream_whole_ms} ms | ${f.rss_mib} MiB |`,
      );
    }
  });
  // The last round in full; the rounds' ratios, and the slowest round's documents.
  const { small, large } = rounds[rounds.length - 1]!;
  const figures: Figures = { rounds: ROUNDS };
  for (const [k, v] of Object.entries(small)) figures[`w8_${k}`] = v;
  for (const [k, v] of Object.entries(large)) figures[`w${WORKERS}_${k}`] = v;
  const ratio = (key: string): number => {
    const each = rounds.map((r) => Number(r.large[key]) / Number(r.small[key]));
    figures[`${key.replace(/_ms$/, '')}_ratio_rounds`] = each.map((x) => x.toFixed(2)).join(' ');
    return Number(median(each).toFixed(2));
  };
  const worst = (key: string): number => Math.max(...rounds.map((r) => Number(r.large[key])));
  // The bare proxy's own growth beside the router's: what undici in front of this many
  // upstreams costs any Node proxy (docs/dependencies.md §Idle connections and the young generation).
  const ratios = { p50: ratio('p50_ms'), p99: ratio('p99_ms') };
  console.log(
    `one connection: ${WORKERS} workers over 8, median of ${ROUNDS} round(s): p50 ${ratio('lone_p50_ms')}×, p99 ${ratio('lone_p99_ms')}×, p99.9 ${ratio('lone_p999_ms')}× (${figures['lone_p999_ratio_rounds']})`,
  );
  for (const q of ['p50', 'p99'] as const)
    console.log(
      `${q}: ${WORKERS} workers over 8, median of ${ROUNDS} round(s): the router ${ratios[q]}× (${figures[`${q}_ratio_rounds`]}), the bare proxy on undici ${ratio(`bare_${q}_ms`)}×, on the router's pool ${ratio(`own_${q}_ms`)}×`,
    );
  const goals: GoalVerdict[] =
    WORKERS === 4096
      ? [
          atMost('p50 at 4,096 workers over p50 at 8', ratios.p50, 1.5, '×'),
          atMost('p99 at 4,096 workers over p99 at 8', ratios.p99, 2, '×'),
          atMost('/metrics at 4,096 workers', worst('metrics_ms'), 50, ' ms'),
          atMost('the full /admin/state at 4,096 workers', worst('admin_state_ms'), 100, ' ms'),
          atMost(
            '/admin/stream per event at 4,096 workers (the largest, the first included, under traffic)',
            worst('stream_event_kb'),
            200,
            ' KB',
          ),
          atMost('idle router polling 4,096 workers', worst('idle_core_pct'), 15, ' % of a core'),
        ]
      : [];
  for (const g of goals) console.log(`${g.met ? 'met' : 'NOT met'}: ${g.claim}: ${g.figure} (goal ${g.goal})`);
  writeResult('fleet-scale', {
    figures,
    goals,
    bottleneck: 'one core for the router, the stub and the client together on 2 cores; idle, the load polls alone',
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
