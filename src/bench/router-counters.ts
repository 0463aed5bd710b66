import { request } from 'undici';
import { DECISIONS, METRIC_NAMES } from '../contract/index.js';
import type { Decision } from '../contract/index.js';
import { NotARouterMetricsError, RouterMetricsPage } from '../fleet/index.js';
import type { Histogram } from '../fleet/index.js';

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

/**
 * Read the counters from a /metrics body; undefined when it is not a routerctl or
 * sgl-router exposition. The page is read by the console's rules (RouterMetricsPage),
 * so bench and `top` agree on what a router said; what is not exported counts as 0 here,
 * since a run's delta has no use for "unknown".
 */
export function readRouterCounters(text: string): RouterCounters | undefined {
  let page: RouterMetricsPage;
  try {
    page = RouterMetricsPage.parse(text);
  } catch (err) {
    if (err instanceof NotARouterMetricsError) return undefined;
    throw err;
  }
  const diverted = page.histogram(METRIC_NAMES.divertedOverlap);
  return {
    decisions: page.decisions() ?? (Object.fromEntries(DECISIONS.map((d) => [d, 0])) as Record<Decision, number>),
    diverted: diverted?.count ?? 0,
    diverted_blocks: diverted?.sum ?? 0,
    gate_rejections: page.total(METRIC_NAMES.gateRejected) ?? 0,
    partial_diversions: page.total(METRIC_NAMES.partialDiversions) ?? 0,
    selection_failures: page.total(METRIC_NAMES.selectionFailures) ?? 0,
    policy_reasons: Object.fromEntries(page.totalsBy(METRIC_NAMES.policyDecisions, 'reason')),
    ttft: cumulative(page.histogram(METRIC_NAMES.ttft)),
  };
}

/** A family with no series yet (routerctl creates them at the first observation) has nothing to subtract or quote: null, as if absent. */
function cumulative(h: Histogram | null): CumulativeHistogram | null {
  if (!h || h.buckets.length === 0) return null;
  return { le: h.buckets.map((b) => b.le), counts: h.buckets.map((b) => b.count), total: h.count };
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
