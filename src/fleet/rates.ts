import type { DecisionCounts, Histogram, QuantileEstimate, ReplicaRates, ReplicaSnapshot } from './view-model.js';
import { DECISION_LABELS } from './view-model.js';

/**
 * Per-second rates between two snapshots of one replica. Rates are taken per replica,
 * before merging, so that a replica that restarts (its counters drop) or drops out
 * does not show up as a negative or a spike in the fleet's rates: a counter that went
 * down yields `null` for that rate, and the next pair of snapshots recovers.
 */
/** Rates are averaged over this much of the most recent history (docs/metrics-and-admin.md §Console rates). */
export const RATE_WINDOW_MS = 5000;

export function computeRates(prev: ReplicaSnapshot | null | undefined, cur: ReplicaSnapshot): ReplicaRates | null {
  if (!prev) return null;
  const dtS = (cur.at - prev.at) / 1000;
  if (!(dtS > 0)) return null;
  const rate = (a: number | null, b: number | null): number | null => (a === null || b === null || b < a ? null : (b - a) / dtS);

  let decisionsPerS: DecisionCounts | null = null;
  if (prev.decisions && cur.decisions) {
    const out = {} as DecisionCounts;
    let ok = true;
    for (const d of DECISION_LABELS) {
      const r = rate(prev.decisions[d], cur.decisions[d]);
      if (r === null) ok = false;
      out[d] = r ?? 0;
    }
    decisionsPerS = ok ? out : null;
  }

  const prevByUrl = new Map(prev.workers.map((w) => [w.url, w]));
  const before = new Map(prev.workers.map((w) => [w.url, w.gateRejectionsTotal]));
  const gateRejectionsPerSByWorker = new Map<string, number>();
  for (const w of cur.workers) {
    const r = rate(before.get(w.url) ?? null, w.gateRejectionsTotal);
    if (r !== null) gateRejectionsPerSByWorker.set(w.url, r);
  }

  return {
    requestsPerS: rate(prev.requestsTotal, cur.requestsTotal),
    decisionsPerS,
    selectionFailuresPerS: rate(prev.selectionFailuresTotal, cur.selectionFailuresTotal),
    divertedPerS: rate(prev.diverted?.count ?? null, cur.diverted?.count ?? null),
    gateRejectionsPerS: rate(prev.gateRejectionsTotal, cur.gateRejectionsTotal),
    ttftWindow: histogramDelta(prev.ttft, cur.ttft),
    durationWindow: histogramDelta(prev.duration, cur.duration),
    gateRejectionsPerSByWorker,
    latencyWindowByWorker: new Map(
      cur.workers
        .filter((w) => w.duration !== undefined)
        .map((w) => {
          const p = prevByUrl.get(w.url);
          return [
            w.url,
            { ttft: histogramDelta(p?.ttft ?? null, w.ttft ?? null), duration: histogramDelta(p?.duration ?? null, w.duration ?? null) },
          ] as const;
        }),
    ),
  };
}

/**
 * One replica's rates over the last RATE_WINDOW_MS of its snapshots (the oldest within
 * the window to the newest), not between two neighbouring snapshots: a counter that
 * moves in steps of one per half second would otherwise swing 2–3× from frame to frame.
 */
export class RateWindow {
  #recent: ReplicaSnapshot[] = [];

  /** Add the newest snapshot; the rates up to it, or null while there is no earlier one. */
  push(snap: ReplicaSnapshot): ReplicaRates | null {
    const recent = this.#recent;
    recent.push(snap);
    while (recent.length > 2 && snap.at - recent[1]!.at >= RATE_WINDOW_MS) recent.shift();
    const base = recent.length > 1 ? recent[0]! : null;
    // A counter that went backwards (the router restarted): start the window again.
    if (base !== null && base.requestsTotal !== null && snap.requestsTotal !== null && snap.requestsTotal < base.requestsTotal) {
      this.#recent = [snap];
      return null;
    }
    return computeRates(base, snap);
  }
}

/**
 * What a cumulative histogram gained between two snapshots: the observations in
 * between. Null when either is unknown, the bounds differ, or a count went backwards
 * (a restart).
 */
export function histogramDelta(prev: Histogram | null, cur: Histogram | null): Histogram | null {
  if (prev === null || cur === null || prev.buckets.length !== cur.buckets.length || cur.count < prev.count) return null;
  // The same histogram read twice (an unchanged worker on a delta stream) gained nothing.
  if (prev === cur) return nothingGained(cur);
  const buckets: Histogram['buckets'] = [];
  for (let i = 0; i < cur.buckets.length; i++) {
    const a = prev.buckets[i]!;
    const b = cur.buckets[i]!;
    if (a.le !== b.le || b.count < a.count) return null;
    buckets.push({ le: b.le, count: b.count - a.count });
  }
  return { buckets, count: cur.count - prev.count, sum: cur.sum - prev.sum };
}

/**
 * The q-quantile of a histogram, interpolated linearly within its bucket as
 * Prometheus' histogram_quantile does. When it lies above the last finite bound (in the
 * +Inf bucket), that bound is all a histogram can tell: the result is the bound, marked
 * `lowerBound` so that no reader shows it as the figure (docs/metrics-and-admin.md
 * §Console rates). Null without observations.
 */
export function histogramQuantileEstimate(h: Histogram | null, q: number): QuantileEstimate | null {
  if (h === null || !(h.count > 0)) return null;
  const rank = q * h.count;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of h.buckets) {
    if (b.count >= rank) {
      const inBucket = b.count - prevCount;
      return { value: inBucket > 0 ? prevLe + ((b.le - prevLe) * (rank - prevCount)) / inBucket : b.le, lowerBound: false };
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  const top = h.buckets.at(-1);
  return top === undefined ? null : { value: top.le, lowerBound: true };
}

/** histogramQuantileEstimate's value alone, for readers that do not show it (a lower bound reads as the last finite bound). */
export function histogramQuantile(h: Histogram | null, q: number): number | null {
  return histogramQuantileEstimate(h, q)?.value ?? null;
}

const emptyDeltas = new WeakMap<Histogram, Histogram>();

/** histogramDelta of a histogram and itself: its bounds, nothing counted. */
function nothingGained(h: Histogram): Histogram {
  let d = emptyDeltas.get(h);
  if (d === undefined) {
    d = { buckets: h.buckets.map((b) => ({ le: b.le, count: 0 })), count: 0, sum: 0 };
    emptyDeltas.set(h, d);
  }
  return d;
}
