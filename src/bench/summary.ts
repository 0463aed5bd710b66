import type { DriverCounts, RequestResult } from '../workload/index.js';
import { percentiles } from './percentiles.js';
import type { Percentiles } from './percentiles.js';

/** What a run measured, in the JSON shape `routerctl bench --json` prints. */
export interface BenchSummary {
  /** Seconds from the end of the warm-up to the last finished request. */
  window_s: number;
  requests: {
    /** Arrivals the workload produced within --duration. */
    scheduled: number;
    sent: number;
    ok: number;
    failed: number;
    /** Not sent: the client already had --max-in-flight requests outstanding. */
    shed: number;
    /** Sent late, after the session's previous turn finished. */
    held: number;
    /** Held turns the run ended before they could be sent. */
    unsent: number;
    /** Sent during the warm-up, left out of every figure below. */
    warmup: number;
  };
  /** Every request that received a first token, including streams that failed or were cut later. */
  ttft_ms: Percentiles;
  /** Gaps between content chunks of successful requests. */
  itl_ms: Percentiles;
  /** End to end, successful requests. */
  latency_ms: Percentiles;
  throughput: { requests_per_s: number; output_tokens_per_s: number };
  errors: {
    total: number;
    /** HTTP status of failed requests; "0" means no response (refused, reset, timed out, cut at the end). */
    by_status: Record<string, number>;
    /** The router's error code, a transport code, `timeout`, `cut_at_end`, `stream_error`… */
    by_cause: Record<string, number>;
  };
  cache: {
    prompt_tokens: number;
    cached_tokens: number;
    /** cached / prompt tokens over successful requests that reported usage; null when none did. */
    ratio: number | null;
    requests_with_usage: number;
  };
  /** Requests answered with a first token within the SLO, over every measured request (failures count against it). */
  goodput: { slo_ttft_ms: number; ratio: number | null };
}

export interface SummaryInput {
  results: readonly RequestResult[];
  counts: DriverCounts;
  /** performance.now() at arrival time 0. */
  startedAt: number;
  warmupMs: number;
  /** --slo-ttft-ms: goodput's TTFT bound. */
  sloTtftMs: number;
}

const bump = (m: Record<string, number>, k: string): void => void (m[k] = (m[k] ?? 0) + 1);

/** Turn per-request results into the figures an operator compares. */
export function summarize({ results, counts, startedAt, warmupMs, sloTtftMs }: SummaryInput): BenchSummary {
  const measureFrom = startedAt + warmupMs;
  const ttft: number[] = [];
  const itl: number[] = [];
  const latency: number[] = [];
  const byStatus: Record<string, number> = {};
  const byCause: Record<string, number> = {};
  let warmup = 0;
  let ok = 0;
  let failed = 0;
  let outputTokens = 0;
  let promptTokens = 0;
  let cachedTokens = 0;
  let withUsage = 0;
  let withinSlo = 0;
  let lastEnd = measureFrom;
  for (const r of results) {
    if (r.startedAt < measureFrom) {
      warmup++;
      continue;
    }
    lastEnd = Math.max(lastEnd, r.startedAt + r.latencyMs);
    // A first token is a first token even if the stream broke or was cut later: leaving those
    // out would drop exactly the slowest requests of an overloaded configuration.
    if (r.ttftMs !== undefined) ttft.push(r.ttftMs);
    if (r.status !== 200 || r.error !== undefined) {
      failed++;
      bump(byStatus, String(r.status));
      bump(byCause, r.error ?? `http_${r.status}`);
      continue;
    }
    ok++;
    if (r.ttftMs !== undefined && r.ttftMs <= sloTtftMs) withinSlo++;
    latency.push(r.latencyMs);
    for (const gap of r.itlMs) itl.push(gap);
    outputTokens += r.completionTokens ?? r.itlMs.length + (r.ttftMs === undefined ? 0 : 1);
    if (r.promptTokens !== undefined && r.promptTokens > 0) {
      withUsage++;
      promptTokens += r.promptTokens;
      cachedTokens += r.cachedTokens ?? 0;
    }
  }
  const windowS = Math.max(0, lastEnd - measureFrom) / 1000;
  return {
    window_s: round(windowS, 3),
    requests: {
      scheduled: counts.dispatched,
      sent: counts.sent,
      ok,
      failed,
      shed: counts.shed,
      held: counts.held,
      unsent: counts.unsent,
      warmup,
    },
    ttft_ms: roundAll(percentiles(ttft)),
    itl_ms: roundAll(percentiles(itl)),
    latency_ms: roundAll(percentiles(latency)),
    throughput: {
      requests_per_s: windowS > 0 ? round(ok / windowS, 3) : 0,
      output_tokens_per_s: windowS > 0 ? round(outputTokens / windowS, 1) : 0,
    },
    errors: { total: failed, by_status: byStatus, by_cause: byCause },
    cache: {
      prompt_tokens: promptTokens,
      cached_tokens: cachedTokens,
      ratio: promptTokens > 0 ? round(cachedTokens / promptTokens, 4) : null,
      requests_with_usage: withUsage,
    },
    goodput: { slo_ttft_ms: sloTtftMs, ratio: ok + failed > 0 ? round(withinSlo / (ok + failed), 4) : null },
  };
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

function roundAll(p: Percentiles): Percentiles {
  const r = (v: number | null): number | null => (v === null ? null : round(v, 2));
  return { p50: r(p.p50), p90: r(p.p90), p99: r(p.p99), mean: r(p.mean), max: r(p.max), count: p.count };
}
