/**
 * How close routing comes to the infinite-cache ceiling, on a trace with the published
 * statistics of Mooncake's conversation trace (the trace-conversations benchmark's,
 * made by conversationTrace): round robin and cache_aware on 8 simulated engines of
 * 16,384 KV blocks, 16 running, on the virtual clock. Reads `routerctl bench compare`'s
 * JSON: the ceiling, the shared-LRU reference point and each arm's share of the ceiling.
 *
 *   npm run perf -- ceiling [--rate 3] [--requests 12031]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { conversationTrace, MOONCAKE_CONVERSATIONS, toMooncakeJsonl } from '../src/workload/index.js';
import { ROUTERCTL_BIN } from './support/processes.js';
import { benchArg } from './support/args.js';
import { writeResult } from './support/results.js';

interface Report {
  trace: {
    ceiling: { cached_token_share: number; repeated_reference_share: number };
    shared_lru: { capacity_blocks: number; cached_token_share: number };
    over_context: number;
  };
  runs: Array<{ label: string; cached_token_ratio: number | null; ceiling_share: number | null; refused: number }>;
}

const requests = Number(benchArg('requests', '12031'));
const rate = Number(benchArg('rate', '3'));
const trace = conversationTrace({
  requests,
  rate,
  ...MOONCAKE_CONVERSATIONS,
  seed: 1,
});
const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-ceiling-'));
const file = path.join(dir, 'conversations.jsonl');
writeFileSync(file, toMooncakeJsonl(trace));
try {
  const args = ['bench', 'compare', '--trace', file, '--clock', 'virtual', '--sim-workers', '8', '--sim-kv-blocks', '16384'];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [ROUTERCTL_BIN, ...args, '--sim-max-running', '16', '--policy round_robin', '', '--json'], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`routerctl bench exited ${r.status}: ${r.stderr}`);
  const report = JSON.parse(r.stdout) as Report;
  const pct = (v: number | null): string => (v === null ? '–' : `${(100 * v).toFixed(1)} %`);
  const c = report.trace.ceiling;
  const lru = report.trace.shared_lru;
  console.log(`node ${process.version}; ${requests.toLocaleString('en')} requests at ${rate}/s; ${wall.toFixed(1)} s in all`);
  console.log(
    `ceiling ${pct(c.cached_token_share)} of prompt tokens (${pct(c.repeated_reference_share)} of block references repeat); ` +
      `one shared LRU of the fleet's KV (${lru.capacity_blocks} trace blocks): ${pct(lru.cached_token_share)}; ${report.trace.over_context} over the context`,
  );
  console.log('');
  console.log('| configuration | cached tokens | of the ceiling | refused |');
  console.log('|---|---:|---:|---:|');
  for (const a of report.runs) console.log(`| ${a.label} | ${pct(a.cached_token_ratio)} | ${pct(a.ceiling_share)} | ${a.refused} |`);
  const [rr, ca] = report.runs;
  const share = (v: number | null): number | null => (v === null ? null : Number((100 * v).toFixed(1)));
  writeResult('ceiling', {
    figures: {
      requests,
      rate,
      ceiling_cached_pct: share(c.cached_token_share),
      repeated_references_pct: share(c.repeated_reference_share),
      shared_lru_cached_pct: share(lru.cached_token_share),
      round_robin_of_ceiling_pct: share(rr!.ceiling_share),
      cache_aware_of_ceiling_pct: share(ca!.ceiling_share),
      wall_s: Number(wall.toFixed(1)),
    },
    bottleneck: 'one core running the simulated engines (virtual clock)',
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
