/**
 * How fast a trace replays on the virtual clock (docs/bench.md §Virtual clock): a
 * synthetic Mooncake-format trace (the published ones are not shipped) of 10,000
 * requests over 16 shared prefixes of four 512-token blocks, each with one to three
 * blocks of its own, Poisson arrivals at 40/s, through four configurations on 8
 * simulated engines. Wall time per configuration, in this one process.
 *
 *   npm run perf -- trace [--requests 10000]
 */
import { defaultConfig } from '../src/config/index.js';
import type { RouterConfig } from '../src/config/index.js';
import { runTraceVirtual } from '../src/virtual/index.js';
import { parseMooncakeTrace, selectTrace, traceDigest } from '../src/workload/index.js';
import { atMost, writeResult } from './support/results.js';

const i = process.argv.indexOf('--requests');
const n = i > 0 ? Number(process.argv[i + 1]) : 10_000;
let s = 7;
const rnd = (): number => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
const lines: string[] = [];
let t = 0;
let own = 100_000;
for (let k = 0; k < n; k++) {
  t += -Math.log(1 - rnd()) * 25;
  const g = Math.floor(rnd() ** 2 * 16);
  const ids = [g * 10, g * 10 + 1, g * 10 + 2, g * 10 + 3, ...Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => own++)];
  lines.push(
    JSON.stringify({
      timestamp: Math.round(t),
      input_length: (ids.length - 1) * 512 + 1 + Math.floor(rnd() * 511),
      output_length: 32 + Math.floor(rnd() * 200),
      hash_ids: ids,
    }),
  );
}
const trace = selectTrace(parseMooncakeTrace(lines.join('\n'), 512).requests, {});
const arms: Array<[string, Partial<RouterConfig>]> = [
  ['round_robin', { policy: 'round_robin' }],
  ['cache_aware', {}],
  ['cache_aware --worker-queue-limit 4', { workerQueueLimit: 4 }],
  ['cache_aware --worker-queue-limit 16', { workerQueueLimit: 16 }],
];
console.log(
  `node ${process.version}; ${trace.length.toLocaleString('en')} requests (digest ${traceDigest(trace)}); 8 simulated engines of 65,536 blocks`,
);
console.log('');
console.log('| configuration | wall | decisions hit / miss / queued / all_queued | cached tokens | TTFT p50 ms (simulated) |');
console.log('|---|---:|---|---:|---:|');
let total = 0;
const figures: Record<string, number | string> = { requests: trace.length, digest: traceDigest(trace) };
const slug = (name: string): string => name.replace(/--worker-queue-limit /, 'limit_').replace(/\W+/g, '_');
for (const [name, over] of arms) {
  const t0 = performance.now();
  const r = runTraceVirtual({
    config: { ...defaultConfig(), ...over },
    workers: 8,
    seed: 1,
    trace,
    traceBlockSize: 512,
    engine: { kvBlocks: 65_536 },
  });
  const ms = performance.now() - t0;
  total += ms;
  const d = r.decisions;
  const ttft = [...r.ttftMs].sort((a, b) => a - b)[Math.floor(r.ttftMs.length / 2)] ?? NaN;
  Object.assign(figures, {
    [`${slug(name)}_wall_s`]: Number((ms / 1000).toFixed(1)),
    [`${slug(name)}_cached_pct`]: Number(((100 * r.cachedTokens) / r.promptTokens).toFixed(1)),
    [`${slug(name)}_ttft_p50_ms`]: Number(ttft.toFixed(1)),
  });
  console.log(
    `| ${name} | ${(ms / 1000).toFixed(1)} s | ${d.cache_hit} / ${d.cache_miss} / ${d.cache_worker_queued} / ${d.all_queued} | ${((100 * r.cachedTokens) / r.promptTokens).toFixed(1)} % | ${ttft.toFixed(1)} |`,
  );
}
console.log('');
console.log(`all four: ${(total / 1000).toFixed(1)} s`);
const allFour = Number((total / 1000).toFixed(1));
writeResult('trace', {
  figures: { ...figures, all_four_wall_s: allFour },
  goals: n === 10_000 ? [atMost('a 10,000-request trace through four configurations, on the virtual clock', allFour, 10, ' s')] : [],
  bottleneck: "one core: the simulated engines' KV caches and the router's prefix index, a table probe per 16-token block",
});
