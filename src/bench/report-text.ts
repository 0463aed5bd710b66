import { paint } from '../cli/index.js';
import { DECISIONS, METRIC_NAMES } from '../contract/index.js';
import type { WorkloadOptions } from '../workload/index.js';
import { configurationChart } from './charts.js';
import type { CompareRun } from './compare.js';
import { formatDuration } from './duration.js';
import type { FleetShape } from './fleet-shape.js';
import type { Percentiles } from './percentiles.js';
import type { BenchRun } from './run.js';
import { histogramQuantile } from './router-counters.js';

const ms = (v: number | null): string => (v === null ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const pct = (v: number | null): string => (v === null ? '-' : `${(v * 100).toFixed(1)}%`);
const int = (v: number): string => String(Math.round(v));

/** One line describing the workload, the same in both modes so runs can be compared by eye. */
export function describeWorkload(w: WorkloadOptions, durationMs: number): string {
  const bursts =
    w.burstEverySeconds > 0 && w.burstSeconds > 0 && w.burstFactor !== 1
      ? `bursts x${w.burstFactor} for ${w.burstSeconds}s every ${w.burstEverySeconds}s`
      : 'no bursts';
  return (
    `seed ${w.seed}, ${w.rate}/s (${bursts}), ${formatDuration(durationMs)}; ${w.sessions} open sessions of 1-${w.maxTurns} turns; ` +
    `${w.families} system prompts of ${w.systemTokensMin}-${w.systemTokensMax} tokens, Zipf s=${w.zipfS}; ` +
    `max_tokens median ${w.outputMedianTokens} (max ${w.outputMaxTokens})`
  );
}

function errorsLine(run: BenchRun): string {
  const e = run.summary.errors;
  if (e.total === 0) return 'none';
  const byStatus = Object.entries(e.by_status)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([s, n]) => `${s === '0' ? 'no response' : s}: ${n}`)
    .join(', ');
  const byCause = Object.entries(e.by_cause)
    .sort(([, a], [, b]) => b - a)
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  return `${e.total} (${byStatus}; ${byCause})`;
}

function percentileRow(name: string, p: Percentiles): string[] {
  return [name, ms(p.p50), ms(p.p90), ms(p.p99), ms(p.mean), String(p.count)];
}

/** The plain-text report of `routerctl bench --url`. */
export function renderRunReport(run: BenchRun, w: WorkloadOptions, durationMs: number, color: boolean): string {
  const s = run.summary;
  const r = s.requests;
  const out: string[] = [];
  out.push(
    `${paint('routerctl bench', 'bold', color)}  ${run.url}${run.model ? `  model ${run.model}` : ''}${run.interrupted ? paint('  (interrupted)', 'yellow', color) : ''}`,
  );
  out.push(`workload   ${describeWorkload(w, durationMs)}`);
  out.push(
    `requests   ${r.scheduled} scheduled, ${r.sent} sent, ${r.ok} ok, ${r.failed} failed` +
      `${r.shed ? `, ${r.shed} shed` : ''}${r.held ? `, ${r.held} held for the previous turn` : ''}${r.unsent ? `, ${r.unsent} never sent` : ''}` +
      `${r.warmup ? `, ${r.warmup} in warm-up (not counted)` : ''}`,
  );
  out.push('');
  out.push(
    ...table([
      ['', 'p50', 'p90', 'p99', 'mean', 'n'],
      percentileRow('TTFT ms', s.ttft_ms),
      percentileRow('ITL ms', s.itl_ms),
      percentileRow('latency ms', s.latency_ms),
    ]),
  );
  out.push('');
  out.push(
    `throughput ${s.throughput.requests_per_s.toFixed(2)} req/s, ${s.throughput.output_tokens_per_s.toFixed(0)} output tokens/s over ${s.window_s.toFixed(1)} s`,
  );
  out.push(
    `cached     ${pct(s.cache.ratio)} of prompt tokens (${s.cache.cached_tokens} of ${s.cache.prompt_tokens}, engine-reported cached_tokens)`,
  );
  const errors = errorsLine(run);
  out.push(`errors     ${s.errors.total > 0 ? paint(errors, 'red', color) : errors}`);
  if (run.router) {
    const d = run.router.decisions;
    out.push(
      `router     ${DECISIONS.map((k) => `${k} ${int(d[k])}`).join(', ')}; ${int(run.router.diverted)} diversions gave up ${int(run.router.diverted_blocks)} blocks; ` +
        `${int(run.router.gate_rejections)} gate rejections; ${int(run.router.selection_failures)} selection failures`,
    );
    const routerTtft = run.router.ttft ? histogramQuantile(run.router.ttft, 0.5) : null;
    if (routerTtft !== null) {
      out.push(
        `           TTFT p50 ${Math.round(routerTtft * 1000)} ms at the router (${METRIC_NAMES.ttft}, interpolated in its buckets), ${s.ttft_ms.p50 === null ? '-' : Math.round(s.ttft_ms.p50)} ms at this client`,
      );
    }
  }
  out.push(`arrivals   ${run.arrivals.count}, sha256 ${run.arrivals.digest.slice(0, 16)}`);
  return `${out.join('\n')}\n`;
}

/** The side-by-side report of `routerctl bench --compare`, with its charts. */
export function renderCompareReport(
  runs: readonly CompareRun[],
  ctx: {
    fleet: FleetShape;
    capacity: number;
    /** The --fleet-load the rate was derived from; null when --rate was given. */
    load: number | null;
    workload: WorkloadOptions;
    durationMs: number;
    sameArrivals: boolean;
    /** Stopped by a signal: some configurations may be cut short or missing. */
    interrupted: boolean;
    color: boolean;
    width: number;
  },
): string {
  const { fleet, workload, color } = ctx;
  const out: string[] = [];
  out.push(
    `${paint('routerctl bench --compare', 'bold', color)}${ctx.interrupted ? paint('  (interrupted: the figures cover what ran)', 'yellow', color) : ''}`,
  );
  out.push(
    `fleet      ${fleet.workers} simulated ${fleet.flavor} engines, max-running ${fleet.maxRunning}, speedup ${fleet.speedup}, ` +
      `kv-blocks ${fleet.kvBlocks}, seed ${fleet.seed} (capacity ~${ctx.capacity.toFixed(1)} req/s when prompts are mostly cached)`,
  );
  if (ctx.load !== null) out.push(`load       ${Math.round(ctx.load * 100)}% of that capacity on average, bursts included`);
  out.push(`workload   ${describeWorkload(workload, ctx.durationMs)}`);
  out.push('');
  for (const r of runs) out.push(`  ${paint(r.letter, 'bold', color)}  ${r.label}${r.interrupted ? '  (interrupted)' : ''}`);
  out.push('');
  const col = (f: (r: CompareRun) => string): string[] => runs.map(f);
  const rows: string[][] = [
    ['', ...runs.map((r) => r.letter)],
    ['TTFT p50 ms', ...col((r) => ms(r.summary.ttft_ms.p50))],
    ['TTFT p90 ms', ...col((r) => ms(r.summary.ttft_ms.p90))],
    ['TTFT p99 ms', ...col((r) => ms(r.summary.ttft_ms.p99))],
    ['ITL p50 ms', ...col((r) => ms(r.summary.itl_ms.p50))],
    ['ITL p99 ms', ...col((r) => ms(r.summary.itl_ms.p99))],
    ['latency p50 ms', ...col((r) => ms(r.summary.latency_ms.p50))],
    ['latency p99 ms', ...col((r) => ms(r.summary.latency_ms.p99))],
    ['throughput req/s', ...col((r) => r.summary.throughput.requests_per_s.toFixed(1))],
    ['output tokens/s', ...col((r) => r.summary.throughput.output_tokens_per_s.toFixed(0))],
    ['cached tokens', ...col((r) => pct(r.summary.cache.ratio))],
    [`goodput (TTFT ≤ ${runs[0]?.summary.goodput.slo_ttft_ms ?? 2000} ms)`, ...col((r) => pct(r.summary.goodput.ratio))],
    ['requests ok', ...col((r) => String(r.summary.requests.ok))],
    ['errors', ...col((r) => String(r.summary.errors.total))],
    ...DECISIONS.map((d) => [d, ...col((r) => (r.router ? int(r.router.decisions[d]) : '-'))]),
    ['diversions', ...col((r) => (r.router ? int(r.router.diverted) : '-'))],
    ['gate rejections', ...col((r) => (r.router ? int(r.router.gate_rejections) : '-'))],
    ['arrivals', ...col((r) => String(r.arrivals.count))],
    ['arrivals sha256', ...col((r) => r.arrivals.digest.slice(0, 8))],
  ];
  out.push(...table(rows));
  out.push('');
  const errored = runs.filter((r) => r.summary.errors.total > 0);
  for (const r of errored) out.push(`errors ${r.letter}: ${errorsLine(r)}`);
  out.push(
    ctx.sameArrivals
      ? 'every configuration was offered the same arrivals (same digest)'
      : paint('the configurations were NOT offered the same arrivals (digests differ); compare with care', 'yellow', color),
  );
  out.push('');
  const letters = runs.map((r) => r.letter);
  const chartWidth = Math.max(24, Math.min(90, ctx.width - 16));
  out.push(
    configurationChart({
      title: 'TTFT by configuration',
      unit: 'ms',
      letters,
      color,
      width: chartWidth,
      series: [
        { name: 'p99', values: runs.map((r) => r.summary.ttft_ms.p99), color: '\u001b[31m' },
        { name: 'p90', values: runs.map((r) => r.summary.ttft_ms.p90), color: '\u001b[33m' },
        { name: 'p50', values: runs.map((r) => r.summary.ttft_ms.p50), color: '\u001b[32m' },
      ],
      min: 0,
    }),
  );
  out.push(
    configurationChart({
      title: 'Cached-token ratio by configuration',
      unit: '%',
      letters,
      color,
      width: chartWidth,
      height: 6,
      series: [
        {
          name: 'cached',
          values: runs.map((r) => (r.summary.cache.ratio === null ? null : r.summary.cache.ratio * 100)),
          color: '\u001b[36m',
        },
      ],
      min: 0,
      max: 100,
    }),
  );
  return `${out.join('\n')}\n`;
}

/** Left-aligned first column, right-aligned figures. */
function table(rows: readonly string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[0]!) : cell.padStart(Math.max(widths[i]!, 8))))
      .join('  ')
      .trimEnd(),
  );
}
