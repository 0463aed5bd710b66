/**
 * How soon the queue gate sees a queue change: from the moment a simulated engine's
 * waiting count changes (PUT /sim/load) to the moment the router's load table holds
 * it, with the engine pushing LoadStat and with the router polling it (default
 * --load-poll-interval-ms 250).
 *
 *   npm run perf -- load-push [--changes 40]
 */
import { defaultConfig } from '../src/config/index.js';
import { Router, silentLogger } from '../src/router/index.js';
import { startSimFleet } from '../src/sim/index.js';
import { atMost, writeResult } from './support/results.js';

const argv = process.argv.slice(2);
const i = argv.indexOf('--changes');
const CHANGES = i >= 0 ? Number(argv[i + 1]) : 40;

async function run(push: boolean): Promise<number[]> {
  const fleet = await startSimFleet({
    workers: 1,
    speedup: 20,
    ...(push ? { push: { kvEvents: true, kvFormat: 'array', loadPublish: true, topic: '' } } : {}),
  });
  const router = new Router({
    config: { ...defaultConfig(), workerUrls: fleet.urls, port: 0, workerQueueLimit: 6, tui: false },
    log: silentLogger,
    version: 'bench',
  });
  await router.start();
  const url = fleet.urls[0]!;
  const waiting = (): number | null => router.state().workers[0]!.waiting;
  const source = (): string => router.state().workers[0]!.load_source;
  while (waiting() === null || (push && source() !== 'push')) await new Promise((r) => setTimeout(r, 20));
  const delays: number[] = [];
  for (let k = 0; k < CHANGES; k++) {
    const target = 1 + (k % 9);
    // Start from a random phase of the poll interval and the push tick.
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 300));
    await fetch(`${url}/sim/load`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ num_waiting_reqs: target }),
    });
    const changed = performance.now();
    while (waiting() !== target) await new Promise((r) => setImmediate(r));
    delays.push(performance.now() - changed);
  }
  await router.close();
  await fleet.close();
  return delays.sort((a, b) => a - b);
}

const q = (xs: number[], p: number): string => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!.toFixed(0);
console.log(`node ${process.version}; ${CHANGES} queue changes per row, each at a random phase`);
console.log('');
console.log('| load by | p50 ms | p90 ms | max ms |');
console.log('|---|---:|---:|---:|');
const figures: Record<string, number> = { changes: CHANGES };
for (const push of [true, false]) {
  const d = await run(push);
  const by = push ? 'push' : 'poll';
  Object.assign(figures, {
    [`${by}_p50_ms`]: Number(q(d, 0.5)),
    [`${by}_p90_ms`]: Number(q(d, 0.9)),
    [`${by}_max_ms`]: Math.round(d.at(-1)!),
  });
  console.log(`| ${push ? 'push (LoadStat)' : 'poll (every 250 ms)'} | ${q(d, 0.5)} | ${q(d, 0.9)} | ${d.at(-1)!.toFixed(0)} |`);
}
writeResult('load-push', {
  figures,
  goals: [atMost("a pushed queue change reaches the router's load table (p90)", figures.push_p90_ms!, 100, ' ms')],
  bottleneck: "the engine's 50 ms look at its own queue (SGLang's cadence), not the machine",
});
