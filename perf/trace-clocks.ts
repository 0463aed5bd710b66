/**
 * Is the virtual clock honest? The same small trace (multi-turn conversations in the
 * Mooncake format, made here: conversationTrace) through the same configurations on
 * the same simulated fleet, once on the virtual clock and once over HTTP in real time
 * (`routerctl bench compare --trace FILE --clock wall`: `routerctl sim` and `routerctl serve`
 * processes, a streaming client). The table gives each arm's decision mix, cached-token
 * ratio and TTFT p50 on both clocks, and how far apart they are (docs/bench.md
 * §Virtual clock).
 *
 *   npm run perf -- trace-clocks [--requests 300] [--rate 4]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { conversationTrace, toMooncakeJsonl } from '../src/workload/index.js';
import { ROUTERCTL_BIN } from './support/processes.js';
import { benchArg } from './support/args.js';
import { atMost, writeResult } from './support/results.js';

const requests = Number(benchArg('requests', '300'));
const rate = Number(benchArg('rate', '4'));
const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-clocks-'));
const file = path.join(dir, 'conversations.jsonl');
writeFileSync(
  file,
  toMooncakeJsonl(
    conversationTrace({
      requests,
      rate,
      blockSize: 512,
      apps: 4,
      systemTokens: 2048,
      sessions: 24,
      turnTokens: 300,
      outputTokens: 64,
      maxContextTokens: 8192,
      seed: 11,
    }),
  ),
);

const common = [
  'bench',
  'compare',
  '--trace',
  file,
  '--json',
  '--sim-workers',
  '4',
  '--sim-kv-blocks',
  '8192',
  '--sim-max-running',
  '16',
  '--sim-speedup',
  '1',
  '--policy round_robin',
  '',
  '--worker-queue-limit 2',
];
interface Arm {
  label: string;
  finished: number;
  decisions: Record<string, number>;
  cached_token_ratio: number;
  ttft_ms: { p50: number };
}
const run = (clock: string): { runs: Arm[]; trace: { digest: string } } => {
  const r = spawnSync(process.execPath, [ROUTERCTL_BIN, ...common, '--clock', clock], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`--clock ${clock} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as { runs: Arm[]; trace: { digest: string } };
};
try {
  const t0 = performance.now();
  const virtual = run('virtual');
  const t1 = performance.now();
  const wall = run('wall');
  const t2 = performance.now();
  console.log(
    `node ${process.version}; ${requests} requests at ${rate}/s (digest ${virtual.trace.digest}, wall ${wall.trace.digest}); 4 simulated engines, 8,192 KV blocks, 16 running; virtual ${((t1 - t0) / 1000).toFixed(1)} s, wall ${((t2 - t1) / 1000).toFixed(1)} s`,
  );
  console.log('');
  console.log('| configuration | clock | finished | hit / miss / queued / all_queued | cached tokens | TTFT p50 ms |');
  console.log('|---|---|---:|---|---:|---:|');
  const share = (a: Arm): number[] => {
    const d = a.decisions;
    const total = Object.values(d).reduce((x, y) => x + y, 0);
    return ['cache_hit', 'cache_miss', 'cache_worker_queued', 'all_queued'].map((k) => (total > 0 ? (100 * (d[k] ?? 0)) / total : 0));
  };
  const figures: Record<string, number | string> = { requests, rate, digest: virtual.trace.digest };
  const apart = { mix: 0, cached: 0, ttft: 0 };
  const slug = (label: string): string => label.replace(/--/g, '').replace(/\W+/g, '_').replace(/^_|_$/g, '') || 'defaults';
  virtual.runs.forEach((v, i) => {
    const w = wall.runs[i]!;
    for (const [clock, a] of [
      ['virtual', v],
      ['wall', w],
    ] as const) {
      console.log(
        `| ${a.label} | ${clock} | ${a.finished} | ${share(a)
          .map((x) => `${x.toFixed(1)}%`)
          .join(' / ')} | ${(100 * a.cached_token_ratio).toFixed(1)}% | ${a.ttft_ms.p50} |`,
      );
    }
    const mix = Math.max(...share(v).map((x, k) => Math.abs(x - share(w)[k]!)));
    const cached = Math.abs(100 * (v.cached_token_ratio - w.cached_token_ratio));
    const ttft = w.ttft_ms.p50 > 0 ? Math.abs(v.ttft_ms.p50 / w.ttft_ms.p50 - 1) * 100 : NaN;
    console.log(`| ${v.label} | apart | | ${mix.toFixed(1)} points at most | ${cached.toFixed(1)} points | ${ttft.toFixed(0)} % |`);
    Object.assign(figures, {
      [`${slug(v.label)}_virtual_ttft_p50_ms`]: v.ttft_ms.p50,
      [`${slug(v.label)}_wall_ttft_p50_ms`]: w.ttft_ms.p50,
      [`${slug(v.label)}_virtual_cached_pct`]: Number((100 * v.cached_token_ratio).toFixed(1)),
      [`${slug(v.label)}_wall_cached_pct`]: Number((100 * w.cached_token_ratio).toFixed(1)),
    });
    apart.mix = Math.max(apart.mix, mix);
    apart.cached = Math.max(apart.cached, cached);
    apart.ttft = Math.max(apart.ttft, ttft);
  });
  const round1 = (x: number): number => Number(x.toFixed(1));
  writeResult('trace-clocks', {
    figures: {
      ...figures,
      decision_mix_apart_points: round1(apart.mix),
      cached_apart_points: round1(apart.cached),
      ttft_p50_apart_pct: round1(apart.ttft),
      virtual_s: round1((t1 - t0) / 1000),
      wall_s: round1((t2 - t1) / 1000),
    },
    goals: [
      atMost('decision mix, virtual against wall clock (points apart, worst configuration)', round1(apart.mix), 5),
      atMost('cached-token ratio, virtual against wall clock (points apart)', round1(apart.cached), 5),
      atMost('TTFT p50, virtual against wall clock (% apart)', round1(apart.ttft), 20, ' %'),
    ],
    bottleneck: "neither clock: the wall run is paced by the trace's arrivals",
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
