import { StopSignals, colorEnabled } from '../cli/index.js';
import { ErrorCodes, RouterctlError, usageError } from '../errors/index.js';
import { meanArrivalRate } from '../workload/index.js';
import type { WorkloadOptions } from '../workload/index.js';
import { checkConfigurations } from './check-configurations.js';
import { runComparison, sameArrivals } from './compare.js';
import { ConfigurationError, buildConfigurations } from './configurations.js';
import { fleetCapacity, rateForLoad } from './fleet-shape.js';
import type { FleetShape } from './fleet-shape.js';
import { ProgressLine } from './progress.js';
import { renderCompareReport, renderRunReport } from './report-text.js';
import { runAgainst } from './run.js';
import type { RunSettings } from './run.js';
import { workloadJson } from './workload-json.js';

/** Everything `routerctl bench` was asked for, validated and with units resolved. */
export interface BenchOptions {
  url: string | undefined;
  compare: string[];
  sweep: string[];
  routerArgs: string;
  /** Base rate; undefined = the default for the mode (derived from capacity with --compare). */
  rate: number | undefined;
  load: number;
  durationMs: number | undefined;
  warmupMs: number;
  /** Undefined = the default for the mode. */
  graceMs: number | undefined;
  timeoutMs: number;
  /** --slo-ttft-ms: goodput's TTFT bound. */
  sloTtftMs: number;
  maxInFlight: number;
  model: string | undefined;
  workload: Omit<WorkloadOptions, 'rate'>;
  fleet: FleetShape;
  json: boolean;
}

const DEFAULT_URL_DURATION_MS = 60_000;
const DEFAULT_COMPARE_DURATION_MS = 30_000;
const DEFAULT_URL_RATE = 10;
const DEFAULT_URL_GRACE_MS = 5_000;
/** Simulated fleets are ours to wait for: let an overloaded configuration's backlog finish so its worst latencies are measured, not cut. */
const DEFAULT_COMPARE_GRACE_MS = 30_000;
const INTERRUPTED = 130;

interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/** Run the benchmark and print its report; resolves to the exit status. */
export async function runBench(o: BenchOptions, io: Io = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const interrupt = new AbortController();
  // First stop: stop measuring and report what was measured. Second: leave now (the exit
  // hook reaps children). An interrupted run is 130 whichever signal asked, as
  // man routerctl-bench documents: the report is partial, not a router's cut.
  const stops = new StopSignals().listen(['SIGINT', 'SIGTERM']);
  void stops.first.then(() => interrupt.abort());
  void stops.second.then(() => process.exit(INTERRUPTED));
  try {
    const status = o.url !== undefined ? await benchUrl(o.url, o, io, interrupt.signal) : await benchCompare(o, io, interrupt.signal);
    return interrupt.signal.aborted ? INTERRUPTED : status;
  } finally {
    stops.dispose();
  }
}

function runSettings(o: BenchOptions, rate: number, durationMs: number, defaultGraceMs: number): RunSettings {
  return {
    workload: { ...o.workload, rate },
    durationMs,
    graceMs: o.graceMs ?? defaultGraceMs,
    warmupMs: o.warmupMs,
    timeoutMs: o.timeoutMs,
    maxInFlight: o.maxInFlight,
    model: o.model,
    sloTtftMs: o.sloTtftMs,
  };
}

async function benchUrl(url: string, o: BenchOptions, io: Io, signal: AbortSignal): Promise<number> {
  const durationMs = o.durationMs ?? DEFAULT_URL_DURATION_MS;
  const settings = runSettings(o, o.rate ?? DEFAULT_URL_RATE, durationMs, DEFAULT_URL_GRACE_MS);
  const progress = new ProgressLine(io.stderr, colorEnabled(io.stderr));
  const run = await runAgainst(url, settings, { progress, label: 'bench', signal });
  if (o.json) {
    const report = {
      mode: 'url',
      url: run.url,
      model: run.model,
      duration_s: durationMs / 1000,
      warmup_s: o.warmupMs / 1000,
      workload: workloadJson(settings.workload),
      summary: run.summary,
      arrivals: run.arrivals,
      router: run.router,
      interrupted: run.interrupted,
    };
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    io.stdout.write(renderRunReport(run, settings.workload, durationMs, colorEnabled(io.stdout)));
  }
  // A run in which nothing succeeded is a failed benchmark, even though it was reported.
  return run.summary.requests.ok > 0 ? 0 : 1;
}

async function benchCompare(o: BenchOptions, io: Io, signal: AbortSignal): Promise<number> {
  let configs;
  try {
    configs = buildConfigurations(o.compare, o.sweep, o.routerArgs);
  } catch (err) {
    if (err instanceof ConfigurationError) throw usageError(err.message);
    throw err;
  }
  if (configs.length === 0) throw usageError('--compare needs at least one configuration (use "" for the defaults)');
  let settings;
  try {
    settings = await checkConfigurations(configs, o.fleet.workers);
  } catch (err) {
    if (err instanceof ConfigurationError) throw usageError(err.message);
    throw err;
  }
  const durationMs = o.durationMs ?? DEFAULT_COMPARE_DURATION_MS;
  const capacity = fleetCapacity(o.fleet, o.workload);
  const meanOverBase = meanArrivalRate({ ...o.workload, rate: 1 });
  const rate = o.rate ?? rateForLoad(capacity, meanOverBase, o.load);
  const run = runSettings(o, rate, durationMs, DEFAULT_COMPARE_GRACE_MS);
  const progress = new ProgressLine(io.stderr, colorEnabled(io.stderr));
  let runs;
  try {
    runs = await runComparison(
      { run, fleet: o.fleet, configs, settings },
      // On a terminal the progress line says it all; in a log, one line per configuration marks progress.
      { progress, signal, ...(progress.enabled ? {} : { note: (line: string) => void io.stderr.write(`${line}\n`) }) },
    );
  } catch (err) {
    if (err instanceof RouterctlError) throw err;
    throw new RouterctlError(ErrorCodes.BENCH_START, (err as Error).message, { cause: err });
  }
  const same = sameArrivals(runs);
  if (o.json) {
    const report = {
      mode: 'compare',
      fleet: {
        workers: o.fleet.workers,
        max_running: o.fleet.maxRunning,
        speedup: o.fleet.speedup,
        kv_blocks: o.fleet.kvBlocks,
        flavor: o.fleet.flavor,
        seed: o.fleet.seed,
        capacity_rps: Math.round(capacity * 10) / 10,
      },
      duration_s: durationMs / 1000,
      warmup_s: o.warmupMs / 1000,
      load: o.rate === undefined ? o.load : null,
      workload: workloadJson(run.workload),
      same_arrivals: same,
      interrupted: signal.aborted,
      runs: runs.map((r) => ({
        letter: r.letter,
        label: r.label,
        args: r.args,
        settings: r.settings,
        url: r.url,
        worker_urls: r.workerUrls,
        model: r.model,
        summary: r.summary,
        arrivals: r.arrivals,
        router: r.router,
        interrupted: r.interrupted,
      })),
    };
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    io.stdout.write(
      renderCompareReport(runs, {
        fleet: o.fleet,
        capacity,
        load: o.rate === undefined ? o.load : null,
        workload: run.workload,
        durationMs,
        sameArrivals: same,
        interrupted: signal.aborted,
        color: colorEnabled(io.stdout),
        width: io.stdout.columns ?? 100,
      }),
    );
  }
  return runs.length === configs.length && runs.every((r) => r.summary.requests.ok > 0) ? 0 : 1;
}
