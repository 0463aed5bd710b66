/**
 * Why a fixed --worker-queue-limit hurts: the figures of
 * docs/routing.md §Why a fixed limit hurts. On a trace with Mooncake's conversation
 * statistics (the first 6,000 requests, seed 1), 8 simulated SGLang engines of 32,768
 * KV blocks, running caps 16 and 256: find the rate at which plain cache_aware's
 * goodput (TTFT ≤ 2 s) first drops below 90 % (capacity as BENCHMARKS.md, section
 * 12 defines it), then at 80, 95 and 110 % of it run seven arms: no gate, fixed limits
 * 2, 4, 6, 8 and 16, and the floor at 2 under a limit of 4.
 *
 * Each (cap, load) is measured twice over the same trace file. `routerctl bench compare`
 * on the virtual clock gives the table an operator would see (goodput, TTFT, cached
 * tokens, decision mix, diverted blocks). Then the same replay in this process, the
 * router's own VirtualFleet driven as runTraceVirtual drives it, keeps what the report
 * folds away: each selection's reason label (capacity fallback, saturation pin…), its
 * partial diversions, what the index said the deepest owner and the chosen worker held,
 * and what the engine then found cached, by decision. Its totals must equal the
 * report's (checked), so the breakdown explains the table's own runs. At 95 and 110 %
 * the in-process replay also runs on two more fleet seeds: past the point where plain
 * cache_aware collapses, which state a run ends in is the seed's doing as much as the
 * limit's, and one seed cannot tell them apart.
 *
 *   npm run perf -- gate-sweep [--requests 6000] [--caps 16,256]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yargs from 'yargs';
import { addConfigOptions, resolveConfig } from '../src/config/index.js';
import type { RouterConfig } from '../src/config/index.js';
import type { CacheAwareDecision } from '../src/router/index.js';
import { VirtualFleet } from '../src/virtual/index.js';
import {
  conversationTrace,
  MOONCAKE_CONVERSATIONS,
  selectTrace,
  toMooncakeJsonl,
  traceBlockKeys,
  tracePrompt,
} from '../src/workload/index.js';
import type { TraceRequest } from '../src/workload/index.js';
import { ROUTERCTL_BIN } from './support/processes.js';
import { benchArg } from './support/args.js';
import { writeResult } from './support/results.js';
import { FIXED_GATE_ARMS, GATE_KV_BLOCKS, GATE_LOADS, GATE_SLO_MS, GATE_WORKERS, gateFleetFlags } from './support/gate-cells.js';
import type { Figures } from './support/results.js';

const requests = Number(benchArg('requests', '6000'));
const caps = benchArg('caps', '16,256').split(',').map(Number);
const WORKERS = GATE_WORKERS;
const KV_BLOCKS = GATE_KV_BLOCKS;
const SLO_MS = GATE_SLO_MS;
const SEED = 7; // bench's default --seed: the fleet's
/** Other fleet seeds, replayed in this process only, at the loads where the arms part: is an arm's lead the limit's doing, or the run's? */
const OTHER_SEEDS = [8, 9];
const LOADS = GATE_LOADS;
/** The ladder's last rung (docs/routing.md §Capacity fallback): any worker, ignoring capacity, the gate and the cache. */
const CAPACITY_FALLBACK = 'no_cache_candidate_capacity_fallback_power_of_two';
const ARMS = FIXED_GATE_ARMS;
const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-gate-sweep-'));

const traceAt = (rate: number): TraceRequest[] => conversationTrace({ requests, rate, ...MOONCAKE_CONVERSATIONS, seed: 1 });

function traceFile(rate: number): string {
  const file = path.join(dir, `conversations-${rate}.jsonl`);
  writeFileSync(file, toMooncakeJsonl(traceAt(rate)));
  return file;
}

const fleetFlags = (cap: number): string[] => [...gateFleetFlags(cap), '--json'];

interface ReportArm {
  label: string;
  decisions: Record<CacheAwareDecision, number>;
  diverted_blocks: number;
  cached_token_ratio: number | null;
  cached_tokens: number;
  ttft_ms: { p50: number | null; p90: number | null; p99: number | null };
  goodput: number | null;
}

function bench(args: string[], cap: number): ReportArm[] {
  const r = spawnSync(process.execPath, [ROUTERCTL_BIN, 'bench', ...args, ...fleetFlags(cap)], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`routerctl bench exited ${r.status}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { runs: ReportArm[] }).runs;
}

/** What the report folds away, per arm: by reason label and by decision. */
interface Breakdown {
  reasons: Record<string, number>;
  partialDiversions: number;
  /** The same sums over partial diversions alone (booked cache_hit: a shallower owner won because the deepest was gated). */
  partial: { n: number; engineCached: number; deepest: number; chosen: number; ttftOk: number };
  /** Per decision: requests, engine-cached tokens, tokens the index said the deepest owner held, and the chosen worker. */
  byDecision: Record<CacheAwareDecision, { n: number; engineCached: number; deepest: number; chosen: number; ttftOk: number }>;
  /** Diversions (cache_worker_queued) whose worker the index said held none of the prompt. */
  coldDiversions: number;
  /**
   * At each capacity fallback, workers failing capacity admission (docs/routing.md §Hard capacity admission) on
   * the running cap and on KV: which limit bound when the ladder gave up on the cache.
   */
  capacityRunningFull: number;
  capacityKvFull: number;
  /** Owners the index knew per request, summed (a prefix spread over more workers costs more KV). */
  owners: number;
  ownersBeyondSystem: number;
  cachedTokens: number;
  promptTokens: number;
  goodput: number;
}

async function routerConfig(flags: string): Promise<RouterConfig> {
  const argv = (await addConfigOptions(yargs(flags === '' ? [] : flags.split(' ')))
    .exitProcess(false)
    .parseAsync()) as Record<string, unknown>;
  const r = await resolveConfig({ argv });
  if (r.errors.length > 0) throw new Error(`${flags}: ${r.errors[0]!.message}`);
  return r.config;
}

/** runTraceVirtual's replay (src/virtual/virtual-trace-run.ts, trace-id keying), keeping each selection's audit. */
function replay(config: RouterConfig, trace: readonly TraceRequest[], cap: number, seed = SEED): Breakdown {
  const fleet = new VirtualFleet({
    config,
    workers: WORKERS,
    engine: { kvBlocks: KV_BLOCKS, maxRunning: cap, maxModelLen: 131_072 },
    seed,
  });
  const { clock, engines, workers, table, prefix, policy, random } = fleet;
  const blank = (): Breakdown['byDecision'][CacheAwareDecision] => ({ n: 0, engineCached: 0, deepest: 0, chosen: 0, ttftOk: 0 });
  const b: Breakdown = {
    reasons: {},
    partialDiversions: 0,
    partial: blank(),
    byDecision: { cache_hit: blank(), cache_miss: blank(), cache_worker_queued: blank(), all_queued: blank() },
    coldDiversions: 0,
    capacityRunningFull: 0,
    capacityKvFull: 0,
    owners: 0,
    ownersBeyondSystem: 0,
    cachedTokens: 0,
    promptTokens: 0,
    goodput: 0,
  };
  const systemBlocks = MOONCAKE_CONVERSATIONS.systemTokens / config.blockSize;
  const engineBlock = fleet.params.blockSize;
  let outstanding = trace.length;
  const last = trace.reduce((m, r) => Math.max(m, r.atMs), 0);
  fleet.startSampling(last + config.loadPollIntervalMs);
  let hints = new Int32Array(0);
  let ok = 0;
  const send = (r: TraceRequest): void => {
    const now = clock.now();
    const hashes = traceBlockKeys(r, MOONCAKE_CONVERSATIONS.blockSize, config.blockSize);
    const engineKeys = engineBlock === config.blockSize ? hashes : traceBlockKeys(r, MOONCAKE_CONVERSATIONS.blockSize, engineBlock);
    const prompt = tracePrompt(r, MOONCAKE_CONVERSATIONS.blockSize, engineBlock, engineKeys);
    const view = table.view(now);
    if (hints.length < hashes.length) hints = new Int32Array(Math.max(hashes.length, 2 * hints.length));
    const signal = prefix.signal(hashes, hints);
    const outcome = policy.select({ pool: view, load: view, inputTokens: r.inputLength, prefix: signal, random });
    if (!outcome.ok) {
      outstanding--;
      return;
    }
    b.reasons[outcome.reason] = (b.reasons[outcome.reason] ?? 0) + 1;
    if (outcome.reason === CAPACITY_FALLBACK)
      for (const w of workers) {
        const n = view.native(w);
        if (n === undefined) continue;
        if (n.running + 1 > n.maxRunningRequests) b.capacityRunningFull++;
        if (n.totalTokens + r.inputLength > n.maxTotalTokens) b.capacityKvFull++;
      }
    const audit = outcome.cacheAware;
    const decision = audit?.decision ?? 'cache_miss';
    const slot = outcome.worker.slot;
    const tokensOf = (blocks: number): number => Math.min(r.inputLength, blocks * config.blockSize);
    const deepest = tokensOf(signal.matches.reduce((m, x) => Math.max(m, x.blocks), 0));
    const chosen = tokensOf(signal.matches.find((m) => m.worker.slot === slot)?.blocks ?? 0);
    b.owners += signal.matches.length;
    b.ownersBeyondSystem += signal.matches.filter((m) => m.blocks > systemBlocks).length;
    if (decision === 'cache_worker_queued' && chosen === 0) b.coldDiversions++;
    const d = b.byDecision[decision];
    const p = audit?.partialDiversion === true ? b.partial : undefined;
    for (const x of p === undefined ? [d] : [d, p]) {
      x.n++;
      x.deepest += deepest;
      x.chosen += chosen;
    }
    const worker = workers[slot]!;
    worker.inflight++;
    let first: number | undefined;
    const submitted = engines[slot]!.submitKeyed(
      { prompt, maxTokens: r.outputLength, ignoreEos: true },
      {
        onToken(_piece, _index, at) {
          if (first === undefined) first = at;
        },
        onFinish(req) {
          worker.inflight--;
          outstanding--;
          d.engineCached += req.cachedTokens;
          if (p !== undefined) p.engineCached += req.cachedTokens;
          if (first !== undefined && first - now <= SLO_MS) {
            ok++;
            d.ttftOk++;
            if (p !== undefined) p.ttftOk++;
          }
        },
      },
    );
    if (!submitted.ok) {
      worker.inflight--;
      outstanding--;
      return;
    }
    fleet.recordSent(slot, hashes, hints);
  };
  for (const r of trace) clock.schedule(r.atMs, () => send(r));
  clock.runUntilIdle();
  if (outstanding !== 0) throw new Error(`${outstanding} requests never settled`);
  b.partialDiversions = b.partial.n;
  const tokens = fleet.finish();
  b.cachedTokens = tokens.cachedTokens;
  b.promptTokens = tokens.promptTokens;
  b.goodput = ok / trace.length;
  return b;
}

const pct = (v: number | null, digits = 1): string => (v === null ? '–' : `${(100 * v).toFixed(digits)}`);
const sec = (ms: number | null): string => (ms === null ? '–' : (ms / 1000).toFixed(2));

try {
  const t0 = performance.now();
  const figures: Figures = { requests, workers: WORKERS, kv_blocks: KV_BLOCKS, slo_ttft_ms: SLO_MS };
  const configs = await Promise.all(ARMS.map((a) => routerConfig(a.flags)));
  let mismatches = 0;
  for (const cap of caps) {
    // Capacity: the first rate at which plain cache_aware's goodput drops below 90 %: coarse steps, then whole rates.
    const step = cap <= 16 ? 4 : 8;
    const swept: Array<[number, number]> = [];
    const probe = (rate: number): number => {
      const g = bench(['run', '--trace', traceFile(rate)], cap)[0]!.goodput ?? 0;
      swept.push([rate, g]);
      return g;
    };
    let high = cap <= 16 ? 24 : 48;
    while (probe(high) >= 0.9) high += step;
    let rate90 = high;
    for (let rate = high - step + 1; rate < high; rate++)
      if (probe(rate) < 0.9) {
        rate90 = rate;
        break;
      }
    figures[`cap${cap}_rate_90_rps`] = rate90;
    console.log(`\n## running cap ${cap}: 8 engines of 32,768 KV blocks, ${requests.toLocaleString('en')} requests`);
    console.log(
      `plain cache_aware goodput by rate: ${swept
        .sort((a, b) => a[0] - b[0])
        .map(([r, g]) => `${r}: ${pct(g)} %`)
        .join(', ')}; capacity (first below 90 %) ${rate90} req/s`,
    );
    for (const load of LOADS) {
      const rate = Math.round(rate90 * load * 10) / 10;
      const file = traceFile(rate);
      const report = bench(['compare', ...ARMS.map((a) => a.flags), '--trace', file], cap);
      const trace = selectTrace(traceAt(rate), {});
      console.log(`\n### cap ${cap}, ${Math.round(load * 100)} % of capacity: ${rate} req/s`);
      console.log(
        '| arm | goodput % | TTFT p50 / p99 s | cached % | hit / miss / queued / all_queued | diverted blocks | partial div. | capacity fallback (workers full on running cap / KV) | saturation pin | cold div. | per diversion, tokens: deepest owner → chosen (index) → cached (engine) | per partial diversion, the same | owners/req (beyond system) |',
      );
      console.log('|---|---:|---|---:|---|---:|---:|---:|---:|---:|---|---|---|');
      ARMS.forEach((arm, i) => {
        const rep = report[i]!;
        const b = replay(configs[i]!, trace, cap);
        const dec = rep.decisions;
        if (b.cachedTokens !== rep.cached_tokens || b.byDecision.cache_worker_queued.n !== dec.cache_worker_queued) mismatches++;
        const q = b.byDecision.cache_worker_queued;
        const kept = (x: Breakdown['partial']): string =>
          x.n === 0
            ? '–'
            : `${Math.round(x.deepest / x.n).toLocaleString('en')} → ${Math.round(x.chosen / x.n).toLocaleString('en')} → ${Math.round(x.engineCached / x.n).toLocaleString('en')}`;
        const capFallback = b.reasons[CAPACITY_FALLBACK] ?? 0;
        const pin = b.reasons.saturation_pin ?? 0;
        console.log(
          `| ${arm.label} | ${pct(rep.goodput)} | ${sec(rep.ttft_ms.p50)} / ${sec(rep.ttft_ms.p99)} | ${pct(rep.cached_token_ratio)} | ${dec.cache_hit} / ${dec.cache_miss} / ${dec.cache_worker_queued} / ${dec.all_queued} | ${rep.diverted_blocks} | ${b.partialDiversions} | ${capFallback}${capFallback === 0 ? '' : ` (${(b.capacityRunningFull / capFallback).toFixed(1)} / ${(b.capacityKvFull / capFallback).toFixed(1)})`} | ${pin} | ${b.coldDiversions} | ${kept(q)} | ${kept(b.partial)} | ${(b.owners / trace.length).toFixed(2)} (${(b.ownersBeyondSystem / trace.length).toFixed(2)}) |`,
        );
        const key = `cap${cap}_load${Math.round(load * 100)}_${arm.key}`;
        Object.assign(figures, {
          [`${key}_goodput`]: rep.goodput,
          [`${key}_ttft_p50_ms`]: rep.ttft_ms.p50,
          [`${key}_ttft_p99_ms`]: rep.ttft_ms.p99,
          [`${key}_cached_token_ratio`]: rep.cached_token_ratio,
          [`${key}_cache_hit`]: dec.cache_hit,
          [`${key}_cache_miss`]: dec.cache_miss,
          [`${key}_cache_worker_queued`]: dec.cache_worker_queued,
          [`${key}_all_queued`]: dec.all_queued,
          [`${key}_diverted_blocks`]: rep.diverted_blocks,
          [`${key}_partial_diversions`]: b.partialDiversions,
          [`${key}_capacity_fallback`]: capFallback,
          [`${key}_saturation_pin`]: pin,
          [`${key}_capacity_fallback_running_full_workers_mean`]:
            capFallback === 0 ? null : Number((b.capacityRunningFull / capFallback).toFixed(2)),
          [`${key}_capacity_fallback_kv_full_workers_mean`]: capFallback === 0 ? null : Number((b.capacityKvFull / capFallback).toFixed(2)),
          [`${key}_cold_diversions`]: b.coldDiversions,
          [`${key}_diversion_deepest_tokens_mean`]: q.n === 0 ? null : Math.round(q.deepest / q.n),
          [`${key}_diversion_engine_cached_tokens_mean`]: q.n === 0 ? null : Math.round(q.engineCached / q.n),
          [`${key}_partial_deepest_tokens_mean`]: b.partial.n === 0 ? null : Math.round(b.partial.deepest / b.partial.n),
          [`${key}_partial_engine_cached_tokens_mean`]: b.partial.n === 0 ? null : Math.round(b.partial.engineCached / b.partial.n),
          [`${key}_partial_goodput`]: b.partial.n === 0 ? null : Number((b.partial.ttftOk / b.partial.n).toFixed(4)),
          [`${key}_cache_hit_goodput`]:
            b.byDecision.cache_hit.n === 0 ? null : Number((b.byDecision.cache_hit.ttftOk / b.byDecision.cache_hit.n).toFixed(4)),
          [`${key}_diversion_goodput`]: q.n === 0 ? null : Number((q.ttftOk / q.n).toFixed(4)),
          [`${key}_cache_miss_goodput`]:
            b.byDecision.cache_miss.n === 0 ? null : Number((b.byDecision.cache_miss.ttftOk / b.byDecision.cache_miss.n).toFixed(4)),
          [`${key}_all_queued_goodput`]:
            b.byDecision.all_queued.n === 0 ? null : Number((b.byDecision.all_queued.ttftOk / b.byDecision.all_queued.n).toFixed(4)),
          [`${key}_owners_per_request`]: Number((b.owners / trace.length).toFixed(3)),
          [`${key}_owners_beyond_system_per_request`]: Number((b.ownersBeyondSystem / trace.length).toFixed(3)),
          [`${key}_reasons`]: JSON.stringify(b.reasons),
        });
      });
      figures[`cap${cap}_load${Math.round(load * 100)}_rate_rps`] = rate;
      if (load < 0.9) continue;
      // The same trace on other fleets (seeds): goodput and cached tokens per seed.
      console.log(`\ncap ${cap}, ${Math.round(load * 100)} %: goodput % (cached %) by fleet seed ${[SEED, ...OTHER_SEEDS].join(' / ')}`);
      console.log(`| arm | ${[SEED, ...OTHER_SEEDS].map((s) => `seed ${s}`).join(' | ')} |`);
      console.log(`|---|${[SEED, ...OTHER_SEEDS].map(() => '---:').join('|')}|`);
      ARMS.forEach((arm, i) => {
        const key = `cap${cap}_load${Math.round(load * 100)}_${arm.key}`;
        const cells = [`${pct(figures[`${key}_goodput`] as number)} (${pct(figures[`${key}_cached_token_ratio`] as number)})`];
        for (const seed of OTHER_SEEDS) {
          const b = replay(configs[i]!, trace, cap, seed);
          const cached = b.cachedTokens / b.promptTokens;
          figures[`${key}_seed${seed}_goodput`] = Number(b.goodput.toFixed(4));
          figures[`${key}_seed${seed}_cached_token_ratio`] = Number(cached.toFixed(4));
          figures[`${key}_seed${seed}_capacity_fallback`] = b.reasons[CAPACITY_FALLBACK] ?? 0;
          cells.push(`${pct(b.goodput)} (${pct(cached)})`);
        }
        console.log(`| ${arm.label} | ${cells.join(' | ')} |`);
      });
    }
  }
  const wall = (performance.now() - t0) / 1000;
  figures.replay_report_mismatches = mismatches;
  figures.wall_s = Number(wall.toFixed(1));
  console.log(
    `\nin-process replays that differ from bench's report (cached tokens or diversions): ${mismatches}; ${wall.toFixed(1)} s in all`,
  );
  writeResult('gate-sweep', { figures, bottleneck: 'one core running the simulated engines (virtual clock), each arm twice' });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
