import { request } from 'undici';
import { TrafficDriver, Workload } from '../workload/index.js';
import type { DriverCounts, RequestResult, WorkloadOptions } from '../workload/index.js';
import type { ProgressLine } from './progress.js';
import { counterDelta, scrapeRouterCounters } from './router-counters.js';
import type { RouterCounters } from './router-counters.js';
import { summarize } from './summary.js';
import type { BenchSummary } from './summary.js';

export interface RunSettings {
  workload: WorkloadOptions;
  durationMs: number;
  /** After --duration, how long requests still running may take before they are cut. */
  graceMs: number;
  warmupMs: number;
  /** Per-request limit. */
  timeoutMs: number;
  maxInFlight: number;
  /** The `model` to send; discovered from /v1/models when undefined. */
  model: string | undefined;
  /** --slo-ttft-ms: goodput counts requests whose TTFT is at most this. */
  sloTtftMs: number;
}

/** One run of the workload against one endpoint. */
export interface BenchRun {
  url: string;
  model: string | null;
  summary: BenchSummary;
  /** The arrivals dispatched, in order: equal digests mean the same request sequence. */
  arrivals: { count: number; digest: string };
  /** The router's decision counters over the run; null when the endpoint has no sgl_router metrics. */
  router: RouterCounters | null;
  /** True when the run was interrupted (SIGINT) before its duration. */
  interrupted: boolean;
}

export interface RunHooks {
  progress?: ProgressLine;
  label?: string;
  /** Aborting ends the run early; what was measured so far is still summarised. */
  signal?: AbortSignal;
  /** Every request's result as it completes (the summary keeps only percentiles). */
  onResult?: (r: RequestResult) => void;
}

/** Probes before the run are short: a stalled server must not eat into the time bound. */
const PROBE_TIMEOUT_MS = 1500;

/**
 * Drive the workload at `url` for the duration and summarise it. Whatever the server
 * does (errors, stalls, refusing connections), this resolves within about
 * duration + grace + two probe timeouts, with every failure counted.
 */
export async function runAgainst(url: string, s: RunSettings, hooks: RunHooks = {}): Promise<BenchRun> {
  const base = url.replace(/\/+$/, '');
  const [model, before] = await Promise.all([
    s.model === undefined ? discoverModel(base) : Promise.resolve(s.model),
    scrapeRouterCounters(base, PROBE_TIMEOUT_MS),
  ]);
  const results: RequestResult[] = [];
  const driver = new TrafficDriver(new Workload(s.workload), {
    url: base,
    ...(model ? { model } : {}),
    maxInFlight: s.maxInFlight,
    requestTimeoutMs: s.timeoutMs,
    horizonS: s.durationMs / 1000,
    onResult: (r) => {
      results.push(r);
      hooks.onResult?.(r);
    },
  });
  let interrupted = false;
  const onAbort = (): void => {
    interrupted = true;
    void driver.stop();
  };
  if (hooks.signal?.aborted) onAbort();
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  hooks.progress?.start(
    hooks.label ?? 'bench',
    s.durationMs,
    () => driver.startedAt,
    (): DriverCounts => driver.counts(),
  );
  try {
    await driver.runFor(s.durationMs, s.graceMs);
  } finally {
    hooks.progress?.stop();
    hooks.signal?.removeEventListener('abort', onAbort);
  }
  const after = await scrapeRouterCounters(base, PROBE_TIMEOUT_MS);
  return {
    url: base,
    model: model ?? null,
    summary: summarize({ results, counts: driver.counts(), startedAt: driver.startedAt, warmupMs: s.warmupMs, sloTtftMs: s.sloTtftMs }),
    arrivals: { count: driver.digest.count, digest: driver.digest.hex() },
    router: after ? counterDelta(before, after) : null,
    interrupted,
  };
}

/** The first model the endpoint lists, so requests name it as the OpenAI API expects; undefined if it lists none. */
async function discoverModel(url: string): Promise<string | undefined> {
  try {
    const res = await request(`${url}/v1/models`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    const body = (await res.body.json()) as { data?: Array<{ id?: unknown }> };
    const id = body.data?.[0]?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
