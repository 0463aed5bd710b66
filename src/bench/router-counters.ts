import { request } from 'undici';
import { histogramSeries, parsePrometheusText, sumSamples } from '../prometheus/index.js';
import type { ParsedFamily } from '../prometheus/index.js';

import { DECISIONS } from '../contract/index.js';
import type { Decision } from '../contract/index.js';
export { DECISIONS };
export type { Decision };

/** The router's own account of a run: how its cache-aware selections went (docs/metrics-and-admin.md §Metric families). */
export interface RouterCounters {
  decisions: Record<Decision, number>;
  /** Observations of sgl_router_diverted_overlap_blocks: gate diversions that gave up a prefix. */
  diverted: number;
  /** Matched prefix blocks those diversions gave up, summed. */
  diverted_blocks: number;
  gate_rejections: number;
  partial_diversions: number;
  selection_failures: number;
  /** sgl_router_policy_decisions_total by reason. */
  policy_reasons: Record<string, number>;
  /** sgl_router_ttft_seconds, summed over models: the router's own view of time to first token. */
  ttft: CumulativeHistogram | null;
}

/** A Prometheus histogram: cumulative counts at each finite upper bound, and the total. */
export interface CumulativeHistogram {
  le: number[];
  counts: number[];
  total: number;
}

/**
 * The q-quantile of a cumulative histogram, interpolated linearly inside the bucket
 * it falls in (Prometheus' histogram_quantile); null without observations. A value
 * above the highest finite bound is reported as that bound.
 */
export function histogramQuantile(h: CumulativeHistogram, q: number): number | null {
  if (h.total <= 0) return null;
  const rank = q * h.total;
  for (let i = 0; i < h.le.length; i++) {
    if (h.counts[i]! < rank) continue;
    const lower = i === 0 ? 0 : h.le[i - 1]!;
    const below = i === 0 ? 0 : h.counts[i - 1]!;
    const inBucket = h.counts[i]! - below;
    return inBucket > 0 ? lower + ((h.le[i]! - lower) * (rank - below)) / inBucket : h.le[i]!;
  }
  return h.le[h.le.length - 1] ?? null;
}

function readHistogram(family: ParsedFamily | undefined): CumulativeHistogram | null {
  if (!family) return null;
  const byLe = new Map<number, number>();
  for (const s of histogramSeries(family)) for (const b of s.buckets) byLe.set(b.le, (byLe.get(b.le) ?? 0) + b.count);
  const total = byLe.get(Infinity);
  if (total === undefined) return null;
  const le = [...byLe.keys()].filter((l) => l !== Infinity).sort((a, b) => a - b);
  return { le, counts: le.map((l) => byLe.get(l)!), total };
}

/** Find a counter whether it was exposed as `x_total` (Prometheus text) or `x` (OpenMetrics). */
function counterFamily(families: Map<string, ParsedFamily>, name: string): ParsedFamily | undefined {
  return families.get(name) ?? families.get(name.replace(/_total$/, ''));
}

/** Read the counters from a /metrics body; undefined when it is not a routerctl or sgl-router exposition. */
export function readRouterCounters(text: string): RouterCounters | undefined {
  const f = parsePrometheusText(text);
  const decisionsFamily = counterFamily(f, 'sgl_router_cache_aware_decisions_total');
  const policyFamily = counterFamily(f, 'sgl_router_policy_decisions_total');
  if (!decisionsFamily && !policyFamily && !f.has('sgl_router_requests_total')) return undefined;
  const decisions = Object.fromEntries(
    DECISIONS.map((d) => [d, sumSamples(decisionsFamily, (l) => l.decision === d) ?? 0]),
  ) as Record<Decision, number>;
  const diverted = f.get('sgl_router_diverted_overlap_blocks');
  const series = diverted ? histogramSeries(diverted) : [];
  const policyReasons: Record<string, number> = {};
  for (const s of policyFamily?.samples ?? []) {
    const reason = s.labels.reason;
    if (reason !== undefined && !s.name.endsWith('_created')) policyReasons[reason] = (policyReasons[reason] ?? 0) + s.value;
  }
  return {
    decisions,
    diverted: series.reduce((n, s) => n + (Number.isNaN(s.count) ? 0 : s.count), 0),
    diverted_blocks: series.reduce((n, s) => n + (Number.isNaN(s.sum) ? 0 : s.sum), 0),
    gate_rejections: sumSamples(counterFamily(f, 'sgl_router_queue_gate_rejected_total')) ?? 0,
    partial_diversions: sumSamples(counterFamily(f, 'sgl_router_partial_diversions_total')) ?? 0,
    selection_failures: sumSamples(counterFamily(f, 'sgl_router_policy_selection_failures_total')) ?? 0,
    policy_reasons: policyReasons,
    ttft: readHistogram(f.get('sgl_router_ttft_seconds')),
  };
}

/** What happened between two scrapes (counters only grow; a restart in between shows as the later value). */
export function counterDelta(before: RouterCounters | undefined, after: RouterCounters): RouterCounters {
  if (!before) return after;
  const d = (a: number, b: number): number => (a >= b ? a - b : a);
  const reasons: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.policy_reasons)) reasons[k] = d(v, before.policy_reasons[k] ?? 0);
  return {
    decisions: Object.fromEntries(DECISIONS.map((k) => [k, d(after.decisions[k], before.decisions[k])])) as Record<Decision, number>,
    diverted: d(after.diverted, before.diverted),
    diverted_blocks: d(after.diverted_blocks, before.diverted_blocks),
    gate_rejections: d(after.gate_rejections, before.gate_rejections),
    partial_diversions: d(after.partial_diversions, before.partial_diversions),
    selection_failures: d(after.selection_failures, before.selection_failures),
    policy_reasons: reasons,
    ttft: histogramDelta(before.ttft, after.ttft),
  };
}

function histogramDelta(before: CumulativeHistogram | null, after: CumulativeHistogram | null): CumulativeHistogram | null {
  if (!after) return null;
  if (!before || before.le.length !== after.le.length || before.le.some((l, i) => l !== after.le[i])) return after;
  // A restart in between shows as counts going down: then the later scrape alone is the run.
  if (after.total < before.total || after.counts.some((c, i) => c < before.counts[i]!)) return after;
  return { le: after.le, counts: after.counts.map((c, i) => c - before.counts[i]!), total: after.total - before.total };
}

/**
 * Scrape `${url}/metrics` once. Any failure (no such endpoint, not a router, a
 * stalled server) gives undefined: the decision counters are extra information,
 * never a reason for the benchmark to fail.
 */
export async function scrapeRouterCounters(url: string, timeoutMs = 2000): Promise<RouterCounters | undefined> {
  try {
    const res = await request(`${url.replace(/\/+$/, '')}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    return readRouterCounters(await res.body.text());
  } catch {
    return undefined;
  }
}
