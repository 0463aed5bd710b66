import type {
  Breaker,
  DecisionCounts,
  FleetEvent,
  FleetView,
  FleetWorker,
  Histogram,
  LatencyQuantiles,
  ReplicaStatus,
  RouterInfo,
  WorkerSnapshot,
} from './view-model.js';
import { DECISION_LABELS, emptyRouterInfo, hitRatio, sumKnown } from './view-model.js';
import { histogramQuantileEstimate } from './rates.js';

const BREAKER_RANK: Record<Breaker, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * Merge router replicas into one fleet view. Replicas front the same engines but keep
 * their own counters and router-local state, so:
 * - engine-reported load (waiting, running, sample age) is one fact per engine: take it
 *   from the replica with the freshest sample, never add it up;
 * - router-local counts (in-flight, requests, decisions, gate rejections, the diverted
 *   histogram) are per replica: add them up, and keep in-flight per replica as well;
 * - a worker is gated, unhealthy or its breaker open if any replica says so (the worst
 *   view is the one an operator must see);
 * - alerts are raised if any replica raises them.
 * A replica that stops answering leaves every fleet figure at once (the header marks it
 * down, with the age of its last answer) and rejoins when it answers again: its last
 * snapshot would otherwise keep an old saturation alert and its in-flight requests in
 * the view. Only while no replica answers does the view keep the last snapshots, so a
 * router restart does not blank the console.
 */
export function mergeReplicas(replicas: ReplicaStatus[], now: number = Date.now(), consoleEvents: readonly FleetEvent[] = []): FleetView {
  const seenOnce = replicas.filter((r) => r.snapshot !== null);
  const answering = seenOnce.filter((r) => r.live);
  const live = answering.length > 0 ? answering : seenOnce;
  const snaps = live.map((r) => r.snapshot!);

  const router: RouterInfo = snaps[0] ? { ...snaps[0].router } : emptyRouterInfo();
  const mismatched: string[] = [];
  const compare: Array<[keyof RouterInfo, string]> = [
    ['policy', 'policy'],
    ['workerQueueLimit', 'worker_queue_limit'],
    ['saturationQueueFloor', 'saturation_queue_floor'],
    ['minLoadChoices', 'min_load_choices'],
    ['modelId', 'model_id'],
  ];
  for (const [key, name] of compare) {
    const seen = new Set(snaps.map((s) => s.router[key]));
    if (seen.size > 1) mismatched.push(name);
  }
  // Index agreement among the replicas that answer now: a down one's last digest proves nothing.
  const indexed = live.filter((r) => r.live && r.snapshot!.prefixIndex !== null);
  const indexes = indexed.map((r) => r.snapshot!.prefixIndex!);
  const builtFrom = new Set(indexes.map((x) => x.source));
  const prefixIndex = {
    source: builtFrom.size === 0 ? null : builtFrom.size === 1 ? [...builtFrom][0]! : 'mixed',
    agree: indexes.length < 2 ? null : new Set(indexes.map((x) => x.digest)).size === 1,
    notes: [...new Set(indexed.flatMap((r) => r.snapshot!.prefixIndex!.notes.map((n) => (indexed.length > 1 ? `[${r.url}] ${n}` : n))))],
  };
  if (snaps.length > 1) {
    router.simulated = snaps.some((s) => s.router.simulated);
    const uptimes = snaps.map((s) => s.router.uptimeS).filter((u): u is number => u !== null);
    router.uptimeS = uptimes.length > 0 ? Math.min(...uptimes) : null;
  }

  // Workers, in first-seen order across replicas.
  const byUrl = new Map<string, { parts: Array<WorkerSnapshot | undefined> }>();
  live.forEach((r, i) => {
    for (const w of r.snapshot!.workers) {
      let e = byUrl.get(w.url);
      if (!e) {
        e = { parts: new Array<WorkerSnapshot | undefined>(live.length).fill(undefined) };
        byUrl.set(w.url, e);
      }
      e.parts[i] = w;
    }
  });
  const workers: FleetWorker[] = [];
  for (const [url, { parts }] of byUrl) {
    const seen = parts.filter((p): p is WorkerSnapshot => p !== undefined);
    let rejPerS: number | null = null;
    for (const r of live) {
      const v = r.rates?.gateRejectionsPerSByWorker.get(url);
      if (v !== undefined) rejPerS = (rejPerS ?? 0) + v;
    }
    // Read for one worker's detail (or --json), not for every row of every view: computed on first read.
    let latency: FleetWorker['latency'] | undefined;
    const latencyOf = (): FleetWorker['latency'] =>
      seen.some((p) => p.duration !== undefined)
        ? {
            window: quantilesOf(
              sumHistograms(live.map((r) => r.rates?.latencyWindowByWorker.get(url)?.ttft ?? null)),
              sumHistograms(live.map((r) => r.rates?.latencyWindowByWorker.get(url)?.duration ?? null)),
            ),
            overall: quantilesOf(sumHistograms(seen.map((p) => p.ttft ?? null)), sumHistograms(seen.map((p) => p.duration ?? null))),
          }
        : null;
    const m = seen.length === 1 ? onePart(seen[0]!) : mergeParts(seen);
    // Written out rather than spread: a literal with a getter and a spread is several times slower to make, at thousands per view.
    const worker: FleetWorker = {
      url,
      healthy: m.healthy,
      breaker: m.breaker,
      waiting: m.waiting,
      running: m.running,
      sampleAgeMs: m.sampleAgeMs,
      loadSource: m.loadSource,
      fresh: m.fresh,
      gated: m.gated,
      inflight: m.inflight,
      // One column per replica, in the order given: a replica not counted shows none.
      inflightByReplica: replicas.map((r) => {
        const at = live.indexOf(r);
        return at < 0 ? null : (parts[at]?.inflight ?? null);
      }),
      requestsTotal: m.requestsTotal,
      gateRejectionsTotal: m.gateRejectionsTotal,
      gateRejectionsPerS: rejPerS,
      get latency() {
        if (latency === undefined) latency = latencyOf();
        return latency;
      },
    };
    if (m.kvUsage !== undefined) worker.kvUsage = m.kvUsage;
    if (m.prefillTokensPerS !== undefined) worker.prefillTokensPerS = m.prefillTokensPerS;
    workers.push(worker);
  }

  const decisions = sumDecisions(snaps.map((s) => s.decisions));
  const decisionsPerS = sumDecisions(
    live.map((r) => r.rates?.decisionsPerS ?? null),
    true,
  );
  const allQueued = anyOf(
    snaps.map((s) => s.alerts.allQueued),
    true,
  );
  const waiting = workers.map((w) => w.waiting).filter((v): v is number => v !== null);
  const sources = new Set(live.map((r) => r.snapshot!.source));

  return {
    at: Math.max(0, ...live.map((r) => r.receivedAt ?? 0)) || now,
    replicas,
    router,
    mismatched,
    prefixIndex,
    latency: latencyOf(live),
    recentDecisions: live
      .flatMap((r) => r.decisions ?? [])
      .sort((a, b) => a.at_ms - b.at_ms)
      .slice(-200),
    events: live
      .flatMap((r) => r.snapshot!.events.map((e) => (live.length > 1 ? { ...e, replica: r.url } : e)))
      .concat(consoleEvents)
      .sort((a, b) => a.atMs - b.atMs)
      .slice(-100),
    source: sources.size === 0 ? null : sources.size === 1 ? [...sources][0]! : 'mixed',
    blind: [...new Set(snaps.flatMap((s) => s.blind))],
    behind: snaps.reduce((n, s) => n + (s.behind ?? 0), 0),
    workers,
    decisions,
    decisionsPerS,
    hitRatio: hitRatio(decisions),
    hitRatioRecent: hitRatio(decisionsPerS),
    selectionFailuresTotal: sumKnown(snaps.map((s) => s.selectionFailuresTotal)),
    selectionFailuresPerS: sumRates(live.map((r) => r.rates?.selectionFailuresPerS ?? null)),
    requestsTotal: sumKnown(snaps.map((s) => s.requestsTotal)),
    requestsPerS: sumRates(live.map((r) => r.rates?.requestsPerS ?? null)),
    gateRejectionsTotal: sumKnown(snaps.map((s) => s.gateRejectionsTotal)),
    gateRejectionsPerS: sumRates(live.map((r) => r.rates?.gateRejectionsPerS ?? null)),
    partialDiversionsTotal: sumKnown(snaps.map((s) => s.partialDiversionsTotal)),
    diverted: sumHistograms(snaps.map((s) => s.diverted)),
    divertedPerS: sumRates(live.map((r) => r.rates?.divertedPerS ?? null)),
    alerts: {
      allQueued,
      allQueuedInferred: allQueued === null && (decisionsPerS?.all_queued ?? 0) > 0,
      gateInert: anyOf(
        snaps.map((s) => s.alerts.gateInert),
        true,
      ),
    },
    fleet: {
      known: waiting.length,
      waitingTotal: waiting.length > 0 ? waiting.reduce((a, b) => a + b, 0) : null,
      waitingMin: waiting.length > 0 ? Math.min(...waiting) : null,
      waitingMax: waiting.length > 0 ? Math.max(...waiting) : null,
      inflightTotal: sumKnown(workers.map((w) => w.inflight)),
    },
  };
}

/** What a worker's parts (one per replica that has it) add up to. */
type MergedParts = Omit<FleetWorker, 'url' | 'inflightByReplica' | 'gateRejectionsPerS' | 'latency'>;

export function mergeParts(seen: WorkerSnapshot[]): MergedParts {
  // The freshest engine sample: smallest age among replicas that have one.
  const sampled = seen.filter((p) => p.waiting !== null || p.running !== null);
  const freshest = sampled.sort((a, b) => (a.sampleAgeMs ?? Infinity) - (b.sampleAgeMs ?? Infinity))[0];
  return {
    healthy: anyOf(
      seen.map((p) => p.healthy),
      false,
    ),
    breaker: worstBreaker(seen.map((p) => p.breaker)),
    waiting: freshest?.waiting ?? null,
    running: freshest?.running ?? null,
    sampleAgeMs: freshest?.sampleAgeMs ?? minKnown(seen.map((p) => p.sampleAgeMs)),
    loadSource: freshest?.loadSource ?? null,
    ...(seen.some((p) => p.kvUsage !== undefined) ? { kvUsage: freshest?.kvUsage ?? null } : {}),
    // Each replica learns from what it sent: the mean of those that have learnt.
    ...(seen.some((p) => p.prefillTokensPerS !== undefined) ? { prefillTokensPerS: meanKnown(seen.map((p) => p.prefillTokensPerS)) } : {}),
    fresh:
      freshest?.fresh ??
      anyOf(
        seen.map((p) => p.fresh),
        true,
      ),
    gated: anyOf(
      seen.map((p) => p.gated),
      true,
    ),
    inflight: sumKnown(seen.map((p) => p.inflight)),
    requestsTotal: sumKnown(seen.map((p) => p.requestsTotal)),
    gateRejectionsTotal: sumKnown(seen.map((p) => p.gateRejectionsTotal)),
  };
}

/**
 * mergeParts of a worker only one replica has (every worker, with one router): the
 * same figures without the lists, which at thousands of workers per view were most of
 * the merge's allocations.
 */
export function onePart(p: WorkerSnapshot): MergedParts {
  const sampled = p.waiting !== null || p.running !== null;
  return {
    healthy: p.healthy,
    breaker: p.breaker,
    waiting: sampled ? p.waiting : null,
    running: sampled ? p.running : null,
    sampleAgeMs: p.sampleAgeMs,
    loadSource: sampled ? p.loadSource : null,
    ...(p.kvUsage !== undefined ? { kvUsage: sampled ? p.kvUsage : null } : {}),
    ...(p.prefillTokensPerS !== undefined ? { prefillTokensPerS: p.prefillTokensPerS } : {}),
    fresh: p.fresh,
    gated: p.gated,
    inflight: p.inflight,
    requestsTotal: p.requestsTotal,
    gateRejectionsTotal: p.gateRejectionsTotal,
  };
}

/** `target` if any known value equals it, else the other boolean if any is known, else null. */
function anyOf(values: Array<boolean | null>, target: boolean): boolean | null {
  const known = values.filter((v): v is boolean => v !== null);
  if (known.length === 0) return null;
  return known.includes(target) ? target : !target;
}

function worstBreaker(values: Array<Breaker | null>): Breaker | null {
  let worst: Breaker | null = null;
  for (const v of values) if (v !== null && (worst === null || BREAKER_RANK[v] > BREAKER_RANK[worst])) worst = v;
  return worst;
}

/** A fleet rate is known only when every live replica's rate is. */
function sumRates(values: Array<number | null>): number | null {
  if (values.length === 0 || values.some((v) => v === null)) return null;
  return sumKnown(values);
}

function minKnown(values: Array<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? Math.min(...known) : null;
}

function sumDecisions(list: Array<DecisionCounts | null>, strict = false): DecisionCounts | null {
  if (list.length === 0 || (strict && list.some((d) => d === null))) return null;
  const present = list.filter((d): d is DecisionCounts => d !== null);
  if (present.length === 0) return null;
  const out = {} as DecisionCounts;
  for (const k of DECISION_LABELS) out[k] = present.reduce((a, d) => a + d[k], 0);
  return out;
}

/**
 * Bucket-wise sum. Replicas normally share bounds; where one lacks a bound, its
 * cumulative count at the nearest lower bound stands in (a lower bound, never an overcount).
 * Bounds above the lowest top bound are dropped: past its own top a replica cannot say
 * where its observations lie, and a quantile past the sum's top is shown as above it.
 */
function sumHistograms(list: Array<Histogram | null>): Histogram | null {
  const present = list.filter((h): h is Histogram => h !== null);
  if (present.length === 0) return null;
  // One replica's histogram with rising bounds is its own sum: at thousands of workers
  // per view, rebuilding each one's buckets was most of the merge.
  if (present.length === 1 && rising(present[0]!)) return present[0]!;
  const top = Math.min(...present.map((h) => h.buckets.at(-1)?.le ?? Infinity));
  const bounds = [...new Set(present.flatMap((h) => h.buckets.map((b) => b.le)))].filter((le) => le <= top).sort((a, b) => a - b);
  const cumulativeAt = (h: Histogram, le: number): number => {
    let c = 0;
    for (const b of h.buckets) {
      if (b.le > le) break;
      c = b.count;
    }
    return c;
  };
  return {
    buckets: bounds.map((le) => ({ le, count: present.reduce((a, h) => a + cumulativeAt(h, le), 0) })),
    count: present.reduce((a, h) => a + h.count, 0),
    sum: present.reduce((a, h) => a + h.sum, 0),
  };
}

function rising(h: Histogram): boolean {
  for (let i = 1; i < h.buckets.length; i++) if (!(h.buckets[i]!.le > h.buckets[i - 1]!.le)) return false;
  return true;
}

/** Quantiles over the window and overall, from the live replicas' histograms added up. */
function quantilesOf(ttft: Histogram | null, e2e: Histogram | null): LatencyQuantiles {
  return {
    ttftP50: histogramQuantileEstimate(ttft, 0.5),
    ttftP99: histogramQuantileEstimate(ttft, 0.99),
    e2eP50: histogramQuantileEstimate(e2e, 0.5),
    e2eP99: histogramQuantileEstimate(e2e, 0.99),
    requests: e2e?.count ?? 0,
  };
}

function latencyOf(live: ReplicaStatus[]): FleetView['latency'] {
  return {
    window: quantilesOf(
      sumHistograms(live.map((r) => r.rates?.ttftWindow ?? null)),
      sumHistograms(live.map((r) => r.rates?.durationWindow ?? null)),
    ),
    overall: quantilesOf(sumHistograms(live.map((r) => r.snapshot!.ttft)), sumHistograms(live.map((r) => r.snapshot!.duration))),
  };
}

/** The mean of the known values; null when none is. */
function meanKnown(xs: ReadonlyArray<number | null | undefined>): number | null {
  let sum = 0;
  let n = 0;
  for (const x of xs)
    if (x !== null && x !== undefined) {
      sum += x;
      n++;
    }
  return n === 0 ? null : sum / n;
}
