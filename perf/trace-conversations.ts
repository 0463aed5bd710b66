/**
 * A trace with the published statistics of Mooncake's conversation trace (12,031
 * requests, mean input 12,035 tokens, mean output 343; the file itself is not
 * shipped), made here by conversationTrace, replayed on the virtual clock through
 * round_robin, cache_aware, and the queue gate at three limits, on 8 simulated
 * engines at an arrival rate that saturates them. Reads `routerctl bench`'s JSON
 * report and prints its figures as one table, and how fast the replay ran: requests
 * per second per configuration, the whole command's wall time included (process
 * start, reading the trace, its ceiling), so a floor on the replay's own speed.
 *
 *   npm run perf -- trace-conversations [--rate 3] [--requests 12031]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { conversationTrace, MOONCAKE_CONVERSATIONS, toMooncakeJsonl } from '../src/workload/index.js';
import { ROUTERCTL_BIN } from './support/processes.js';
import { benchArg } from './support/args.js';
import { atLeast, writeResult } from './support/results.js';

interface Arm {
  letter: string;
  label: string;
  decisions: Record<string, number>;
  diverted_blocks: number;
  cached_token_ratio: number | null;
  ttft_ms: { p50: number | null; p90: number | null; p99: number | null };
  requests_per_s: number | null;
  goodput: number | null;
}

const requests = Number(benchArg('requests', '12031'));
const rate = Number(benchArg('rate', '3'));
const limits = benchArg('limits', '2,4,8');
const trace = conversationTrace({
  requests,
  rate,
  ...MOONCAKE_CONVERSATIONS,
  seed: 1,
});
const meanIn = trace.reduce((a, r) => a + r.inputLength, 0) / trace.length;
const meanOut = trace.reduce((a, r) => a + r.outputLength, 0) / trace.length;
const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-conversations-'));
const file = path.join(dir, 'conversations.jsonl');
writeFileSync(file, toMooncakeJsonl(trace));
try {
  const args = [
    'bench',
    'compare',
    '--trace',
    file,
    '--clock',
    'virtual',
    '--sim-workers',
    '8',
    '--sim-kv-blocks',
    '16384',
    '--sim-max-running',
    '16',
    '--policy round_robin',
    '',
    '--sweep',
    `worker-queue-limit=${limits}`,
    '--json',
  ];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [ROUTERCTL_BIN, ...args], { encoding: 'utf8', maxBuffer: 16 << 20 });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`routerctl bench exited ${r.status}: ${r.stderr}`);
  console.log(
    `node ${process.version}; ${trace.length.toLocaleString('en')} requests at ${rate}/s, mean input ${Math.round(meanIn).toLocaleString('en')} tokens, mean output ${Math.round(meanOut)}; 8 engines of 16,384 KV blocks (16 tokens), 16 running; ${wall.toFixed(1)} s in all`,
  );
  const runs = (JSON.parse(r.stdout) as { runs: Arm[] }).runs;
  const perConfiguration = Math.round((trace.length * runs.length) / wall);
  console.log(`replay: ${perConfiguration.toLocaleString('en')} requests/s per configuration (${runs.length} configurations)`);
  const pct = (v: number | null): string => (v === null ? '–' : `${(100 * v).toFixed(1)} %`);
  const share = (a: Arm, k: string): number => {
    const total = Object.values(a.decisions).reduce((x, y) => x + y, 0);
    return total > 0 ? (a.decisions[k] ?? 0) / total : 0;
  };
  const kinds = ['cache_hit', 'cache_miss', 'cache_worker_queued', 'all_queued'];
  console.log('');
  console.log(
    '| | configuration | hit / miss / queued / all_queued | diverted blocks | cached tokens | TTFT p50 / p90 / p99 ms | req/s | goodput |',
  );
  console.log('|---|---|---|---:|---:|---|---:|---:|');
  const figures: Record<string, number | null> = {
    requests: trace.length,
    rate,
    mean_input_tokens: Math.round(meanIn),
    wall_s: Number(wall.toFixed(1)),
    replay_requests_per_s: perConfiguration,
  };
  for (const a of runs) {
    const mix = kinds.map((k) => pct(share(a, k))).join(' / ');
    console.log(
      `| ${a.letter} | ${a.label} | ${mix} | ${a.diverted_blocks} | ${pct(a.cached_token_ratio)} | ${a.ttft_ms.p50} / ${a.ttft_ms.p90} / ${a.ttft_ms.p99} | ${a.requests_per_s} | ${pct(a.goodput)} |`,
    );
    Object.assign(figures, {
      [`${a.letter}_cached_pct`]: a.cached_token_ratio === null ? null : Number((100 * a.cached_token_ratio).toFixed(1)),
      [`${a.letter}_ttft_p50_ms`]: a.ttft_ms.p50,
      [`${a.letter}_goodput_pct`]: a.goodput === null ? null : Number((100 * a.goodput).toFixed(1)),
      [`${a.letter}_all_queued_pct`]: Number((100 * share(a, 'all_queued')).toFixed(1)),
    });
  }
  console.log('');
  console.log(runs.map((a) => `${a.letter}: ${a.label}`).join('; '));
  writeResult('trace-conversations', {
    figures,
    goals:
      requests === 12031
        ? [atLeast('virtual replay of the 12,031-request conversation trace, per configuration', perConfiguration, 5000, ' requests/s')]
        : [],
    bottleneck:
      "one core: the router's prefix index (a table probe and a cache miss per 16-token block recorded, matched or evicted), then the engines' steps (a token emitted per running request per decode step)",
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
