/**
 * Soak with faults: the router in its own process in front of simulated engines in
 * another, chat traffic for the whole duration from this process, and a fault
 * rotation on the engines (5xx bursts, load endpoints that hang, load endpoints that
 * answer garbage, a pinned deep queue). Samples the router's resident memory every
 * 10 s and reports its trend, and counts what the client sent, what was answered
 * (success or a clear error) and what was lost (no answer at all).
 *
 *   npm run perf -- soak [--duration 300] [--rate 40]
 *
 * The bottleneck is the two shared cores: client, router and engines compete for
 * them, so read the memory trend and the loss count, not the request rate.
 */
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { startRouterProcess, startSimProcess } from '../src/bench/index.js';
import { TrafficDriver, Workload, DEFAULT_WORKLOAD } from '../src/workload/index.js';
import { atMost, writeResult } from './support/results.js';

const args = process.argv.slice(2);
const opt = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const durationS = opt('duration', 300);
const rate = opt('rate', 40);

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

async function put(url: string, path: string, body: unknown): Promise<void> {
  const res = await request(`${url}${path}`, {
    method: 'PUT',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  await res.body.dump();
}

/** One fault a period, on one engine, then back to normal. */
const FAULTS: Array<{ name: string; on: unknown; off: unknown; path: string }> = [
  { name: 'failure_rate 0.5', path: '/sim/config', on: { failure_rate: 0.5 }, off: { failure_rate: 0 } },
  { name: 'load endpoint hangs', path: '/sim/config', on: { load_fault: 'hang' }, off: { load_fault: null } },
  { name: 'load endpoint answers garbage', path: '/sim/config', on: { load_fault: 'garbage' }, off: { load_fault: null } },
  { name: 'reported waiting pinned at 50', path: '/sim/load', on: { num_waiting_reqs: 50 }, off: { num_waiting_reqs: null } },
];

const sim = await startSimProcess({ workers: 4, maxRunning: 16, speedup: 2, kvBlocks: 4096, flavor: 'sglang', seed: 7 });
const engines = sim.value;
const router = await startRouterProcess(engines, ['--worker-queue-limit', '6', '--request-timeout-secs', '20']);
const pid = router.process.child.pid!;
const driver = new TrafficDriver(new Workload({ ...DEFAULT_WORKLOAD, rate, sessions: 64 }), {
  url: router.value,
  maxInFlight: 1024,
  requestTimeoutMs: 60_000,
});

const samples: Array<{ t: number; rss: number }> = [];
const t0 = performance.now();
samples.push({ t: 0, rss: rssMiB(pid) });
const sampler = setInterval(() => samples.push({ t: (performance.now() - t0) / 1000, rss: rssMiB(pid) }), 10_000);
let faultIndex = 0;
const faultsTried: string[] = [];
const rotation = setInterval(() => {
  const f = FAULTS[faultIndex % FAULTS.length]!;
  const engine = engines[faultIndex % engines.length]!;
  faultIndex++;
  faultsTried.push(f.name);
  void put(engine, f.path, f.on).catch(() => undefined);
  setTimeout(() => void put(engine, f.path, f.off).catch(() => undefined), 10_000);
}, 20_000);

await driver.runFor(durationS * 1000, 60_000);
clearInterval(sampler);
clearInterval(rotation);
samples.push({ t: (performance.now() - t0) / 1000, rss: rssMiB(pid) });
const c = driver.counts();
await router.process.stop({ signals: 2, killAfterMs: 5000 });
await sim.process.stop({ killAfterMs: 5000 });

// Least-squares slope of RSS after the first minute (warm-up: JIT, pools, the prefix index filling).
const late = samples.filter((s) => s.t >= 60);
const n = late.length;
const mt = late.reduce((a, s) => a + s.t, 0) / n;
const mr = late.reduce((a, s) => a + s.rss, 0) / n;
const slope =
  late.reduce((a, s) => a + (s.t - mt) * (s.rss - mr), 0) /
  Math.max(
    1e-9,
    late.reduce((a, s) => a + (s.t - mt) ** 2, 0),
  );

console.log(`soak ${durationS} s at ${rate} req/s (bursts x3), 4 simulated engines, --worker-queue-limit 6, faults every 20 s for 10 s`);
console.log(`faults tried: ${faultsTried.length} (${[...new Set(faultsTried)].join('; ')})`);
console.log(
  `requests: sent ${c.sent}, answered ${c.finished} (ok ${c.ok}, clear errors ${c.failed}), lost ${c.sent - c.finished}, shed by the client ${c.shed}, never sent ${c.unsent}`,
);
console.log(
  `router RSS MiB: start ${samples[0]!.rss.toFixed(0)}, after 60 s ${late[0]?.rss.toFixed(0) ?? '-'}, end ${samples.at(-1)!.rss.toFixed(0)}, max ${Math.max(...samples.map((s) => s.rss)).toFixed(0)}; trend after 60 s ${(slope * 60).toFixed(2)} MiB/min`,
);
console.log(`samples: ${samples.map((s) => `${Math.round(s.t)}s=${s.rss.toFixed(0)}`).join(' ')}`);
writeResult('soak', {
  figures: {
    duration_s: durationS,
    rate,
    sent: c.sent,
    answered: c.finished,
    ok: c.ok,
    clear_errors: c.failed,
    lost: c.sent - c.finished,
    rss_start_mib: Math.round(samples[0]!.rss),
    rss_end_mib: Math.round(samples.at(-1)!.rss),
    rss_trend_after_60s_mib_per_min: Number((slope * 60).toFixed(2)),
  },
  goals: [atMost('requests lost under engine faults (no answer at all)', c.sent - c.finished, 0)],
  bottleneck: 'the 2 shared cores (client, router and engines); the rate is kept low so the figure is memory, not a backlog',
});
