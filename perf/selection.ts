/**
 * Selection cost per request with the queue gate on, for pools of 8, 128, 1,024 and
 * 4,096 workers: prefix match + the cache-aware ladder, on a fleet where a quarter of
 * the workers are queued, prefixes have 4 owners, and 1 in 4 requests misses the index
 * (the pair fallback). Goal: 1,024 workers within 2x of 8.
 *
 * Then the one rung that scans the pool, range_fallback: the reference semantics
 * take the least-pressured admitted worker of the whole range when both pair members
 * are turned away (docs/routing.md §Range fallback). Here 15 in 16 workers report a
 * full KV cache, so most misses' pairs fail capacity admission and the rung runs; its
 * cost per request is reported per pool size with the share of selections it decided.
 *
 *   npm run perf -- selection
 */
import { textBlockHashes } from '../src/prefix/index.js';
import { CacheAwarePolicy, cacheAwareConfig } from '../src/router/policies/cache-aware/index.js';
import { queueGate } from '../src/router/policies/index.js';
import type { PolicyWorker, PrefixMatch } from '../src/router/policies/index.js';
import { LoadTable } from '../src/router/state/load-monitor/index.js';
import { PrefixIndex } from '../src/router/state/prefix-index/index.js';
import { Rng } from '../src/sim/index.js';
import { systemPrompt } from '../src/workload/index.js';
import { atMost, writeResult } from './support/results.js';

function bench(poolSize: number, fullShare = 0): { usPerRequest: number; rangeShare: number } {
  const rng = new Rng(poolSize);
  const table = new LoadTable(5000);
  const gate = queueGate({ workerQueueLimit: 6, saturationQueueFloor: null });
  table.setGate(gate);
  const workers: PolicyWorker[] = Array.from({ length: poolSize }, (_, slot) => ({
    id: `http://10.0.${slot >> 8}.${slot & 255}:30000`,
    slot,
    inflight: rng.int(8),
  }));
  for (const w of workers) {
    table.register(w);
    table.setInPool(w, true);
    table.apply(
      w,
      [
        [
          0,
          {
            running: 16,
            waiting: rng.next() < 0.25 ? 6 + rng.int(10) : rng.int(6),
            usedTokens: 1000,
            maxTotalTokens: 100_000,
            ...(fullShare > 0 ? { totalTokens: w.slot % 16 === 5 ? 1000 : 99_000, maxRunningRequests: 64 } : {}),
          },
        ],
      ],
      0,
    );
  }
  const index = new PrefixIndex({ maxBlocks: 1_000_000 });
  const buf = index.newMatchBuffer();
  const prompts = Array.from({ length: 64 }, (_, f) => textBlockHashes(systemPrompt(3, f, 2000), 64));
  prompts.forEach((h, f) => {
    for (let k = 0; k < 4; k++) index.record((f * 7 + k * 13) % poolSize, h);
  });
  const misses = Array.from({ length: 16 }, (_, f) => textBlockHashes(systemPrompt(99, f, 2000), 64));
  const policy = new CacheAwarePolicy(cacheAwareConfig({ gate }));
  const random = () => rng.next();
  let sink = 0;
  let ranged = 0;
  const one = (i: number) => {
    const hashes = fullShare > 0 || i % 4 === 3 ? misses[i % 16]! : prompts[i % 64]!;
    const n = index.match(hashes, buf);
    const matches: PrefixMatch[] = [];
    for (let k = 0; k < n; k++) matches.push({ worker: workers[buf.slots[k]!]!, blocks: buf.depths[k]! });
    const view = table.view(1);
    const out = policy.select({ pool: view, load: view, inputTokens: 2000, prefix: { queryBlocks: hashes.length, matches }, random });
    if (out.ok) sink += out.worker.slot;
    if (out.ok && out.reason.endsWith('range_fallback')) ranged++;
  };
  for (let i = 0; i < 5000; i++) one(i);
  ranged = 0;
  const N = fullShare > 0 ? 20_000 : 100_000;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) one(i);
  const us = ((performance.now() - t0) / N) * 1000;
  if (sink === -1) console.log(sink);
  return { usPerRequest: us, rangeShare: ranged / N };
}

console.log(`node ${process.version}; 100,000 selections each; 2,000-token prompts (125 blocks)`);
console.log('| pool | µs per request (match + select) | vs 8 workers |');
console.log('|---|---|---|');
const base = bench(8).usPerRequest;
const figures: Record<string, number> = {};
for (const n of [8, 128, 1024, 4096]) {
  const r = n === 8 ? base : bench(n).usPerRequest;
  figures[`us_per_request_${n}_workers`] = Number(r.toFixed(2));
  console.log(`| ${n} | ${r.toFixed(2)} | ${(r / base).toFixed(2)}x |`);
}
console.log('\nrange_fallback: misses only, 15 in 16 workers with a full KV cache');
console.log('| pool | µs per request | selections decided by range_fallback | vs 8 workers |');
console.log('|---|---|---|---|');
const rangeBase = bench(8, 15 / 16).usPerRequest;
for (const n of [8, 1024, 4096]) {
  const r = n === 8 ? { usPerRequest: rangeBase, rangeShare: bench(8, 15 / 16).rangeShare } : bench(n, 15 / 16);
  figures[`range_fallback_us_per_request_${n}_workers`] = Number(r.usPerRequest.toFixed(2));
  figures[`range_fallback_share_${n}_workers`] = Number(r.rangeShare.toFixed(3));
  console.log(
    `| ${n} | ${r.usPerRequest.toFixed(2)} | ${(100 * r.rangeShare).toFixed(1)} % | ${(r.usPerRequest / rangeBase).toFixed(1)}x |`,
  );
}
const ratio = Number((figures.us_per_request_1024_workers! / base).toFixed(2));
writeResult('selection', {
  figures: { ...figures, ratio_1024_over_8: ratio, ratio_4096_over_8: Number((figures.us_per_request_4096_workers! / base).toFixed(2)) },
  goals: [atMost('selection at 1,024 workers costs within 2× of 8 workers', ratio, 2, '×')],
  bottleneck: 'one core running the match and the ladder in this process',
});
