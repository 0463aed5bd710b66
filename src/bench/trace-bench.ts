import { readFile } from 'node:fs/promises';
import yargs from 'yargs';
import { addConfigOptions, resolveConfig } from '../config/index.js';
import type { RouterConfig } from '../config/index.js';
import { usageError } from '../errors/index.js';
import { DEFAULT_ENGINE_PARAMS, DEFAULT_SIM_MODEL } from '../sim/index.js';
import { runTraceVirtual } from '../virtual/index.js';
import type { RefusalCounts, TraceRunResult } from '../virtual/index.js';
import { GSP_BLOCK_TOKENS, gspTrace, parseMooncakeTrace, selectTrace, traceDigest } from '../workload/index.js';
import type { TraceRequest } from '../workload/index.js';
import { ConfigurationError, buildConfigurations } from './configurations.js';
import type { Configuration } from './configurations.js';
import { startArmRouter, startSimProcess } from './fleet-processes.js';
import { colorEnabled } from '../cli/index.js';
import { configurationChart } from './charts.js';
import { percentiles } from './percentiles.js';
import { runTraceWall } from './trace-wall.js';
import { boundsLines, ceilingShare, overContextLine, traceBounds } from './trace-ceiling.js';
import type { TraceBounds } from './trace-ceiling.js';
import { runTraceRecommendation } from './trace-recommend.js';
import type { TraceBenchOptions } from './trace-bench-options.js';

export type { TraceBenchOptions } from './trace-bench-options.js';

/** One configuration's figures: decision mix, reuse, latency, throughput, goodput (docs/bench.md §Trace report). */
export interface TraceArmReport {
  letter: string;
  label: string;
  requests: number;
  finished: number;
  refused: number;
  /** The refusals by the engine's reason: over the context length, over the KV pool, the waiting queue full. */
  refused_by: { context_length: number; kv_capacity: number; queue_full: number };
  failures: number;
  decisions: Record<string, number>;
  diverted_blocks: number;
  cached_token_ratio: number | null;
  cached_tokens: number;
  /** cached_tokens over the trace's infinite-cache ceiling (docs/simulator.md §The cache ceiling). */
  ceiling_share: number | null;
  ttft_ms: { p50: number | null; p90: number | null; p99: number | null };
  itl_ms: { p50: number | null; p99: number | null };
  output_tokens_per_s: number | null;
  requests_per_s: number | null;
  /** Share of requests whose TTFT met --slo-ttft-ms. */
  goodput: number | null;
  /** Requests `--admission slo` answered 429 (counted as misses in `goodput`). */
  shed: number;
  /** Share of the requests not shed whose TTFT met --slo-ttft-ms: what the admitted saw. */
  goodput_admitted: number | null;
}

/**
 * `routerctl bench --trace FILE --clock virtual` (docs/bench.md §Traces): the trace,
 * replayed through each configuration's real routing code on simulated time, same
 * fleet, same seed. The JSON report depends only on the inputs: two runs with the
 * same trace, configurations and seed print the same bytes.
 */
export async function runTraceBench(o: TraceBenchOptions, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const loaded = o.gsp ? { trace: gspTrace(o.gsp), blockSize: GSP_BLOCK_TOKENS, name: 'gsp' } : await readTrace(o);
  const trace = loaded.trace;
  o = { ...o, traceBlockSize: loaded.blockSize };
  let configs: Configuration[];
  try {
    configs = buildConfigurations(o.compare.length > 0 || o.sweep.length > 0 ? o.compare : [''], o.sweep, o.routerArgs);
  } catch (err) {
    if (err instanceof ConfigurationError) throw usageError(err.message);
    throw err;
  }
  if (o.clock === 'virtual' && configs.some((c) => c.peer !== undefined))
    throw usageError('a peer router runs as a program of its own: on the wall clock only (leave out --clock virtual)');
  if (o.recommend && configs.some((c) => c.peer !== undefined))
    throw usageError('--recommend picks among routerctl configurations: leave the peer routers out');
  // A peer's flags are its own: only routerctl's configurations resolve to a RouterConfig.
  const resolved = await Promise.all(configs.map((c) => (c.peer === undefined ? routerConfig(c) : undefined)));
  const bounds = traceBounds(trace, o.traceBlockSize, {
    workers: o.workers,
    kvBlocks: o.kvBlocks,
    engineBlockSize: DEFAULT_ENGINE_PARAMS.blockSize,
    contextLength: o.contextLength,
  });
  o.note?.(`bench: ${overContextLine(bounds)}`);
  const header = {
    trace: {
      file: loaded.name,
      requests: trace.length,
      digest: traceDigest(trace),
      block_size: o.traceBlockSize,
      speedup: o.speedup,
      ceiling: bounds.ceiling,
      shared_lru: bounds.shared_lru,
      over_context: bounds.over_context,
    },
    clock: o.clock,
    seed: o.seed,
    fleet: { workers: o.workers, kv_blocks: o.kvBlocks, max_running: o.maxRunning, context_length: o.contextLength },
    slo_ttft_ms: o.sloTtftMs,
  };
  // --recommend refused peers above: every configuration resolved.
  if (o.recommend) return runTraceRecommendation(o, { trace, header, bounds, configs, resolved: resolved as RouterConfig[] }, out);
  const arms: TraceArmReport[] = [];
  const wallMs: number[] = [];
  for (const [i, c] of configs.entries()) {
    const t0 = performance.now();
    const r =
      o.clock === 'virtual'
        ? runTraceVirtual({
            config: resolved[i]!,
            workers: o.workers,
            engine: { kvBlocks: o.kvBlocks, maxRunning: o.maxRunning, maxModelLen: o.contextLength },
            seed: o.seed,
            trace,
            traceBlockSize: o.traceBlockSize,
          })
        : await replayOverHttp(o, c, trace);
    wallMs.push(performance.now() - t0);
    arms.push(armReport(c, r, o.sloTtftMs, bounds));
  }
  const report = { ...header, runs: arms };
  if (o.json) out.write(`${JSON.stringify(report)}\n`);
  else {
    const stream = out as NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
    out.write(`${renderTraceReport(report, bounds, wallMs).join('\n')}\n\n`);
    out.write(ttftChart(arms, colorEnabled(stream), stream.columns ?? 100));
  }
  return arms.some((a) => a.finished > 0) ? 0 : 1;
}

/** TTFT p50, p90 and p99 per configuration, as `--compare` charts them (docs/bench.md §Trace report). */
function ttftChart(arms: readonly TraceArmReport[], color: boolean, columns: number): string {
  return configurationChart({
    title: 'TTFT by configuration',
    unit: 'simulated ms',
    letters: arms.map((a) => a.letter),
    color,
    width: Math.max(24, Math.min(90, columns - 16)),
    series: [
      { name: 'p99', values: arms.map((a) => a.ttft_ms.p99), color: '\u001b[31m' },
      { name: 'p90', values: arms.map((a) => a.ttft_ms.p90), color: '\u001b[33m' },
      { name: 'p50', values: arms.map((a) => a.ttft_ms.p50), color: '\u001b[32m' },
    ],
    min: 0,
  });
}

/** The trace file's requests in the window, limit and speedup asked for; every line that is not a request is an error. */
async function readTrace(o: TraceBenchOptions): Promise<{ trace: TraceRequest[]; blockSize: number; name: string }> {
  const file = o.file!;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw usageError(`cannot read the trace ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const { requests, problems } = parseMooncakeTrace(text, o.traceBlockSize);
  if (problems.length > 0) {
    const shown = problems
      .slice(0, 3)
      .map((p) => `${file}:${p.line}: ${p.reason}`)
      .join('; ');
    throw usageError(
      `${problems.length} line${problems.length === 1 ? '' : 's'} of the trace cannot be replayed: ${shown}${problems.length > 3 ? '; …' : ''}`,
    );
  }
  const trace = selectTrace(requests, {
    ...(o.window ? { fromMs: o.window[0] * 1000, toMs: o.window[1] * 1000 } : {}),
    ...(o.limit !== undefined ? { limit: o.limit } : {}),
    speedup: o.speedup,
  });
  if (trace.length === 0) throw usageError(`no request of ${file} falls in the --trace-window / --trace-limit given`);
  return { trace, blockSize: o.traceBlockSize, name: file.split('/').at(-1) ?? file };
}

/** One configuration's fresh simulated fleet and router, as `--compare` starts them, with the trace sent through it. */
async function replayOverHttp(o: TraceBenchOptions, c: Configuration, trace: readonly TraceRequest[]): Promise<TraceRunResult> {
  o.note?.(`bench: ${c.letter} ${c.label}: starting ${o.workers} simulated engines and a router`);
  const sim = await startSimProcess({
    workers: o.workers,
    maxRunning: o.maxRunning,
    speedup: o.simSpeedup,
    kvBlocks: o.kvBlocks,
    flavor: 'sglang',
    seed: o.seed,
    contextLength: o.contextLength,
  });
  let router: Awaited<ReturnType<typeof startArmRouter>> | undefined;
  try {
    router = await startArmRouter(sim.value, c);
    const r = await runTraceWall({
      url: router.value,
      model: DEFAULT_SIM_MODEL,
      trace,
      traceBlockSize: o.traceBlockSize,
      speedup: o.simSpeedup,
      timeoutMs: o.timeoutMs,
    });
    o.note?.(`bench: ${c.letter} ${c.label}: ${r.finished} finished, ${r.refused} refused, ${r.failures} failed`);
    return r;
  } finally {
    await router?.stop();
    await sim.process.stop();
  }
}

/** The RouterConfig `routerctl serve` would run with these flags (its validator, environment and rc file). */
async function routerConfig(c: Configuration): Promise<RouterConfig> {
  const argv = (await addConfigOptions(yargs(c.args)).exitProcess(false).parseAsync()) as Record<string, unknown>;
  const r = await resolveConfig({ argv });
  if (r.errors.length > 0) throw usageError(`configuration ${c.letter} (${c.label}): ${r.errors[0]!.message}`);
  return r.config;
}

/** A run's refusals by reason, as the JSON report spells them. */
export function refusedByReport(r: RefusalCounts): TraceArmReport['refused_by'] {
  return { context_length: r.contextLength, kv_capacity: r.kvCapacity, queue_full: r.queueFull };
}

function armReport(c: Configuration, r: TraceRunResult, sloMs: number, bounds: TraceBounds): TraceArmReport {
  const ttft = percentiles(r.ttftMs);
  const itl = percentiles(r.itlMs);
  const round = (v: number | null): number | null => (v === null ? null : Math.round(v * 10) / 10);
  const good = r.ttftMs.filter((t) => t <= sloMs).length;
  return {
    letter: c.letter,
    label: c.label,
    requests: r.requests,
    finished: r.finished,
    refused: r.refused,
    refused_by: refusedByReport(r.refusedBy),
    failures: r.failures,
    decisions: r.decisions,
    diverted_blocks: r.divertedBlocks,
    cached_token_ratio: r.promptTokens > 0 ? Math.round((r.cachedTokens / r.promptTokens) * 10_000) / 10_000 : null,
    cached_tokens: r.cachedTokens,
    ceiling_share: ceilingShare(r.cachedTokens, bounds),
    ttft_ms: { p50: round(ttft.p50), p90: round(ttft.p90), p99: round(ttft.p99) },
    itl_ms: { p50: round(itl.p50), p99: round(itl.p99) },
    output_tokens_per_s: r.spanS > 0 ? Math.round(r.outputTokens / r.spanS) : null,
    requests_per_s: r.spanS > 0 ? Math.round((r.finished / r.spanS) * 100) / 100 : null,
    goodput: r.requests > 0 ? Math.round((good / r.requests) * 10_000) / 10_000 : null,
    shed: r.shed,
    goodput_admitted: r.requests > r.shed ? Math.round((good / (r.requests - r.shed)) * 10_000) / 10_000 : null,
  };
}

function renderTraceReport(
  report: {
    clock: string;
    trace: { file: string | undefined; requests: number; digest: string; block_size: number };
    runs: TraceArmReport[];
    slo_ttft_ms: number;
    fleet: { workers: number; context_length: number };
  },
  bounds: TraceBounds,
  wallMs: number[],
): string[] {
  const pct = (v: number | null): string => (v === null ? '–' : `${(100 * v).toFixed(1)}%`);
  const ms = (v: number | null): string => (v === null ? '–' : `${v}`);
  const lines = [
    `trace ${report.trace.file}: ${report.trace.requests} requests (digest ${report.trace.digest}), blocks of ${report.trace.block_size} tokens; ${report.fleet.workers} simulated engines; ${report.clock} clock`,
    ...boundsLines(bounds),
    '',
    '| | configuration | hit | miss | queued | all_queued | diverted blocks | cached tokens | of ceiling | TTFT p50 / p90 / p99 ms | ITL p50 ms | output tok/s | req/s | goodput (TTFT ≤ ' +
      report.slo_ttft_ms +
      ' ms) | wall |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|',
  ];
  report.runs.forEach((a, i) => {
    const d = a.decisions;
    const total = Object.values(d).reduce((x, y) => x + y, 0);
    const share = (n: number | undefined): string => (total > 0 ? pct((n ?? 0) / total) : '–');
    lines.push(
      `| ${a.letter} | ${a.label} | ${share(d.cache_hit)} | ${share(d.cache_miss)} | ${share(d.cache_worker_queued)} | ${share(d.all_queued)} | ${a.diverted_blocks} | ${pct(a.cached_token_ratio)} | ${pct(a.ceiling_share)} | ${ms(a.ttft_ms.p50)} / ${ms(a.ttft_ms.p90)} / ${ms(a.ttft_ms.p99)} | ${ms(a.itl_ms.p50)} | ${a.output_tokens_per_s ?? '–'} | ${a.requests_per_s ?? '–'} | ${pct(a.goodput)} | ${(wallMs[i]! / 1000).toFixed(1)} s |`,
    );
  });
  for (const a of report.runs.filter((x) => x.shed > 0))
    lines.push(
      `${a.letter}: ${a.shed} shed by --admission slo (${pct(a.shed / a.requests)} of requests, counted as misses); goodput of the admitted ${pct(a.goodput_admitted)}`,
    );
  const unfinished = report.runs.filter((a) => a.refused + a.failures > 0);
  for (const a of unfinished) {
    const by = a.refused_by;
    lines.push(
      `${a.letter}: ${a.refused} refused by an engine (${by.context_length} over the context length of ${report.fleet.context_length} tokens, ` +
        `${by.kv_capacity} over its KV cache, ${by.queue_full} with its waiting queue full), ${a.failures} found no worker`,
    );
  }
  return lines;
}
