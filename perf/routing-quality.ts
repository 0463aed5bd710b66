/**
 * Routing quality on shared-prefix chat traffic: the tables BENCHMARKS.md publishes.
 *
 * Runs `routerctl bench compare` (the built binary, so the figures come from the
 * command operators run) and prints the command, the fleet and workload, a Markdown
 * table, and the ratios the claims rest on.
 *
 *   npm run perf -- routing [--shape hot-prefix|flat|gsp] [--set policies|sweep|peers|peers-seeds]
 *       [--seeds 7,8,9] [--duration 60s] [--warmup 10s] [--out run.json] [--from run.json]
 *
 * --shape picks the traffic (every workload and fleet flag is spelled out, so the
 * command stands on its own); --set picks the configurations: the four policies of
 * the published table (plus a higher limit on the flat shape), a sweep of
 * --worker-queue-limit, or routerctl beside the peer routers (round robin, cache_aware
 * with and without the gate, smg with and without its own gate, vllm-router: written
 * to perf/results/peers-routing-<shape>.json), or (peers-seeds) routerctl's best chat arm beside smg's over several
 * seeds (perf/results/peers-routing-<shape>-seeds.json); --from formats a saved JSON report
 * again without rerunning. The gsp shape is SGLang's generated-shared-prefix dataset,
 * replayed as a trace on the wall clock.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { writeResult } from './support/results.js';

interface Percentiles {
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

interface Run {
  letter: string;
  label: string;
  summary: {
    requests: { ok: number; failed: number; held: number };
    ttft_ms: Percentiles;
    itl_ms: Percentiles;
    latency_ms: Percentiles;
    throughput: { requests_per_s: number };
    errors: { total: number };
    cache: { ratio: number | null };
    goodput?: { ratio: number | null };
  };
  router: { decisions: Record<string, number>; diverted: number; gate_rejections: number } | null;
  arrivals: { count: number; digest: string };
}

interface Report {
  fleet: { workers: number; max_running: number; speedup: number; kv_blocks: number; flavor: string; capacity_rps: number };
  workload: Record<string, unknown> & { rate_per_s: number };
  duration_s: number;
  warmup_s: number;
  same_arrivals: boolean;
  runs: Run[];
}

/** A replay's arm (`bench compare --workload gsp --json`: src/bench/trace-bench.ts TraceArmReport). */
interface TraceArm {
  letter: string;
  label: string;
  failures: number;
  refused: number;
  decisions: Record<string, number>;
  cached_token_ratio: number | null;
  ttft_ms: Percentiles;
  itl_ms: { p50: number | null; p99: number | null };
  requests_per_s: number | null;
  goodput: number | null;
}

/** A replay's report: the trace, its ceiling and the arms. */
interface TraceReport {
  trace: { requests: number; digest: string; ceiling: { cached_token_share: number } };
  fleet: { workers: number; kv_blocks: number; max_running: number };
  runs: TraceArm[];
}

/** A replay's arms as the chat report's runs, so one table and one set of figures serve both. */
function fromTrace(t: TraceReport): Report {
  return {
    fleet: {
      workers: t.fleet.workers,
      max_running: t.fleet.max_running,
      speedup: 1,
      kv_blocks: t.fleet.kv_blocks,
      flavor: 'sglang',
      capacity_rps: NaN,
    },
    workload: { rate_per_s: NaN, trace_requests: t.trace.requests, ceiling: t.trace.ceiling.cached_token_share },
    duration_s: NaN,
    warmup_s: 0,
    same_arrivals: true,
    runs: t.runs.map((a) => ({
      letter: a.letter,
      label: a.label,
      summary: {
        requests: { ok: 0, failed: a.failures + a.refused, held: 0 },
        ttft_ms: a.ttft_ms,
        itl_ms: { p50: a.itl_ms.p50, p90: null, p99: a.itl_ms.p99 },
        latency_ms: { p50: null, p90: null, p99: null },
        throughput: { requests_per_s: a.requests_per_s ?? 0 },
        errors: { total: a.failures + a.refused },
        cache: { ratio: a.cached_token_ratio },
        goodput: { ratio: a.goodput },
      },
      router: Object.values(a.decisions).some((v) => v > 0) ? { decisions: a.decisions, diverted: 0, gate_rejections: 0 } : null,
      arrivals: { count: t.trace.requests, digest: t.trace.digest },
    })),
  };
}

const FLEET = ['--sim-workers', '8', '--sim-max-running', '8', '--sim-speedup', '0.5', '--sim-kv-blocks', '1024', '--fleet-load', '0.9'];
/** The chat workload's knobs, after each shape's own (`--chat KEY=VALUE,…`, docs/bench.md). */
const CHAT = 'system-tokens=1000-4000,sessions=128,turns=4,output-tokens=48,burst=3x3s/15s';
const SEED = ['--seed', '7'];

const RR = '--policy round_robin';
const CA = '--policy cache_aware';
const GATE = '--policy cache_aware --worker-queue-limit 6';
const FLOOR = '--policy cache_aware --worker-queue-limit 6 --saturation-queue-floor 2';
const GATE16 = '--policy cache_aware --worker-queue-limit 16';
/** No hard capacity admission, alone and with the gate at 2 (docs/routing.md §Hard capacity admission). */
const NO_ADMISSION = '--policy cache_aware --capacity-admission off';
const NO_ADMISSION_GATE = '--policy cache_aware --capacity-admission off --worker-queue-limit 2';
/** The peer routers at their defaults (cache_aware), the gateway also with its own gate off: docs/peers.md §Peer routers. */
const PEERS = ['smg', 'smg --disable-worker-overload-protection', 'vllm-router'];

/** Traffic shapes: what each looks like, its flags, and its policy set. */
const SHAPES: Record<string, { describe: string; flags: string[]; policies: string[] }> = {
  'hot-prefix': {
    describe:
      '16 system prompts of 1-4K tokens, Zipf(1.1) popularity: the hottest prompt opens a third of the sessions, about 2.4 engines of work at this load, ' +
      'and each engine holds 16K tokens of KV (a few prompts)',
    flags: ['--chat', `families=16,zipf=1.1,${CHAT}`, ...SEED, ...FLEET],
    policies: [RR, CA, GATE, FLOOR],
  },
  flat: {
    describe:
      "32 system prompts of 1-4K tokens, Zipf(0.6): the hottest opens ~12 % of sessions, within one engine's capacity, " +
      'and the prompts together (~80K tokens) are five times what one engine caches',
    flags: ['--chat', `families=32,zipf=0.6,${CHAT}`, ...SEED, ...FLEET],
    policies: [RR, CA, GATE, FLOOR, GATE16],
  },
  gsp: {
    describe:
      "SGLang bench_serving's generated-shared-prefix dataset: 16 groups of 16 prompts, each a 2,048-token system prompt and a 128-token question, " +
      '256 tokens out, 8 prompts a second (Poisson), replayed on the wall clock',
    flags: [
      '--workload',
      'gsp',
      '--gsp',
      'num-groups=16,prompts-per-group=16',
      '--rate',
      '8',
      ...SEED,
      '--sim-workers',
      '8',
      '--sim-max-running',
      '8',
      '--sim-kv-blocks',
      '1024',
    ],
    policies: [RR, CA, GATE],
  },
};

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!.replace(/^--/, '');
  const next = process.argv[i + 1];
  if (next === undefined || next.startsWith('--')) {
    args.set(a, 'true');
  } else {
    args.set(a, next);
    i++;
  }
}
const shapeName = args.get('shape') ?? 'hot-prefix';
const shape = SHAPES[shapeName];
const set = args.get('set') ?? 'policies';
const SETS = ['policies', 'sweep', 'peers', 'peers-seeds'];
if (!shape || !SETS.includes(set) || (shapeName === 'gsp' && (set === 'sweep' || set === 'peers-seeds'))) {
  process.stderr.write(
    `usage: routing-quality [--shape ${Object.keys(SHAPES).join('|')}] [--set ${SETS.join('|')}] [--seeds 7,8,9] [--duration 60s] [--warmup 10s] [--out F] [--from F]\n`,
  );
  process.exit(2);
}
// A replay lasts as long as its dataset; a chat run as long as --duration.
const timing = shapeName === 'gsp' ? [] : ['--duration', args.get('duration') ?? '60s', '--warmup', args.get('warmup') ?? '10s'];
if (set === 'peers-seeds') await seedSpread();

const configs =
  set === 'sweep'
    ? [RR, '--sweep', 'worker-queue-limit=off,2,4,6,8,12,16']
    : set === 'peers'
      ? [RR, CA, GATE, NO_ADMISSION, NO_ADMISSION_GATE, ...PEERS]
      : [...shape.policies];
const benchArgs = ['bench', 'compare', ...configs, ...shape.flags, ...timing];

const raw = args.has('from') ? (JSON.parse(readFileSync(args.get('from')!, 'utf8')) as unknown) : await runBench([...benchArgs, '--json']);
const report: Report = shapeName === 'gsp' ? fromTrace(raw as TraceReport) : (raw as Report);
if (args.has('out')) writeFileSync(args.get('out')!, `${JSON.stringify(raw, null, 2)}\n`);
process.stdout.write(format(report));
writeResult(set === 'peers' ? `peers-routing-${shapeName}` : 'routing', {
  figures: figuresOf(report),
  bottleneck: 'the simulated engines: client, router and engines share the machine',
});

/**
 * `--set peers-seeds`: routerctl's best hot-prefix arm against the best peer arm (smg with its own gate off), each seed
 * its own `bench compare` (fresh fleets, the seed's own arrivals): is the goodput gap between them larger than
 * the spread between seeds? Written to perf/results/peers-routing-<shape>-seeds.json.
 */
async function seedSpread(): Promise<never> {
  const seeds = (args.get('seeds') ?? '7,8,9').split(',').map(Number);
  const arms = [NO_ADMISSION_GATE, 'smg --disable-worker-overload-protection'];
  const keys = ['routerctl', 'smg'];
  const flags = shape!.flags.filter((f, i, all) => f !== '--seed' && all[i - 1] !== '--seed');
  const figures: Record<string, number | string | null> = { shape: shapeName, seeds: seeds.join(',') };
  const gaps: number[] = [];
  for (const seed of seeds) {
    const r = (await runBench(['bench', 'compare', ...arms, ...flags, '--seed', String(seed), ...timing, '--json'])) as Report;
    const goodput = r.runs.map((run) => 100 * (run.summary.goodput?.ratio ?? 0));
    r.runs.forEach((run, i) => {
      figures[`seed_${seed}_${keys[i]}_goodput_pct`] = Number(goodput[i]!.toFixed(1));
      figures[`seed_${seed}_${keys[i]}_cached_pct`] = Number((100 * (run.summary.cache.ratio ?? 0)).toFixed(1));
    });
    gaps.push(goodput[1]! - goodput[0]!);
    console.log(`seed ${seed}: goodput routerctl ${goodput[0]!.toFixed(1)} %, smg ${goodput[1]!.toFixed(1)} %`);
  }
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  Object.assign(figures, {
    gap_mean_points: Number(mean.toFixed(1)),
    gap_min_points: Number(Math.min(...gaps).toFixed(1)),
    gap_max_points: Number(Math.max(...gaps).toFixed(1)),
  });
  writeResult(`peers-routing-${shapeName}-seeds`, {
    figures,
    bottleneck: 'the simulated engines: client, router and engines share the machine',
  });
  process.exit(0);
}

/** Per configuration, the figures the table prints, named by its flags. */
function figuresOf(r: Report): Record<string, number | string | null> {
  const out: Record<string, number | string | null> = { shape: shapeName, set };
  for (const run of r.runs) {
    const k = run.label.replace(/--/g, '').replace(/\W+/g, '_').replace(/^_|_$/g, '') || 'defaults';
    const s = run.summary;
    Object.assign(out, {
      [`${k}_ttft_p50_ms`]: s.ttft_ms.p50,
      [`${k}_ttft_p99_ms`]: s.ttft_ms.p99,
      [`${k}_cached_pct`]: s.cache.ratio === null ? null : Number((100 * s.cache.ratio).toFixed(1)),
      [`${k}_goodput_pct`]: s.goodput?.ratio === null || s.goodput?.ratio === undefined ? null : Number((100 * s.goodput.ratio).toFixed(1)),
      [`${k}_requests_per_s`]: Number(s.throughput.requests_per_s.toFixed(1)),
      [`${k}_errors`]: s.errors.total,
    });
  }
  return out;
}

async function runBench(argv: string[]): Promise<unknown> {
  const bin = fileURLToPath(new URL('../../bin/routerctl.js', import.meta.url));
  const child = spawn(process.execPath, [bin, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) {
    process.stderr.write(`routerctl bench exited with status ${code}\n`);
    process.exit(1);
  }
  return JSON.parse(out) as unknown;
}

function quote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `"${a}"`;
}

function format(r: Report): string {
  const ms = (v: number | null): string => (v === null ? '–' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
  const pct = (v: number | null): string => (v === null ? '–' : `${(v * 100).toFixed(1)} %`);
  const lines: string[] = [];
  lines.push(`Shape: ${shapeName} — ${shape!.describe}.`, '');
  lines.push('```', `routerctl ${benchArgs.map(quote).join(' ')}`, '```', '');
  const f = r.fleet;
  const first = r.runs[0];
  if (shapeName !== 'gsp')
    lines.push(
      `Fleet: ${f.workers} simulated ${f.flavor} engines (FCFS), max-running ${f.max_running}, speedup ${f.speedup}, ${f.kv_blocks} KV blocks of 16 tokens; ` +
        `capacity ≈ ${f.capacity_rps} req/s when prompts are mostly cached. Arrivals: ${r.workload.rate_per_s}/s between bursts (×3 for 3 s every 15 s), ` +
        `${r.duration_s} s per configuration, the first ${r.warmup_s} s left out of the figures. Same arrivals in every configuration: ` +
        `${r.same_arrivals && first ? `yes (${first.arrivals.count} requests, sha256 ${first.arrivals.digest.slice(0, 12)}…)` : 'NO'}.`,
      '',
    );
  lines.push(
    '| configuration | TTFT p50 ms | TTFT p90 ms | TTFT p99 ms | ITL p50 ms | latency p99 ms | cached tokens | goodput | req/s | errors | cache_hit / miss / worker_queued / all_queued |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const run of r.runs) {
    const s = run.summary;
    const d = run.router?.decisions;
    const decisions =
      d && Object.values(d).some((v) => v > 0) ? `${d.cache_hit} / ${d.cache_miss} / ${d.cache_worker_queued} / ${d.all_queued}` : '–';
    lines.push(
      `| \`${run.label}\` | ${ms(s.ttft_ms.p50)} | ${ms(s.ttft_ms.p90)} | ${ms(s.ttft_ms.p99)} | ${ms(s.itl_ms.p50)} | ${ms(s.latency_ms.p99)} | ` +
        `${pct(s.cache.ratio)} | ${pct(s.goodput?.ratio ?? null)} | ${s.throughput.requests_per_s.toFixed(1)} | ${s.errors.total} | ${decisions} |`,
    );
  }
  lines.push('');
  const byLabel = (label: string): Run | undefined => r.runs.find((x) => x.label === label);
  const ratio = (a: number | null | undefined, b: number | null | undefined): string =>
    a === null || a === undefined || b === null || b === undefined || b === 0 ? '–' : `${(a / b).toFixed(2)}`;
  const rr = byLabel(RR);
  const ca = byLabel(CA) ?? byLabel('(defaults)');
  if (rr && ca) {
    for (const other of r.runs.filter((x) => x !== rr && x !== ca)) {
      lines.push(
        `- \`${other.label}\` vs \`${ca.label}\`: p99 TTFT × ${ratio(other.summary.ttft_ms.p99, ca.summary.ttft_ms.p99)}, ` +
          `p50 TTFT × ${ratio(other.summary.ttft_ms.p50, ca.summary.ttft_ms.p50)}, cached-token ratio × ${ratio(other.summary.cache.ratio, ca.summary.cache.ratio)}`,
      );
    }
    for (const other of r.runs.filter((x) => x !== rr)) {
      lines.push(
        `- \`${other.label}\` vs round_robin: p50 TTFT × ${ratio(other.summary.ttft_ms.p50, rr.summary.ttft_ms.p50)}, ` +
          `p99 TTFT × ${ratio(other.summary.ttft_ms.p99, rr.summary.ttft_ms.p99)}`,
      );
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
