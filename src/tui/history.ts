import type { DecisionCounts, FleetView } from '../fleet/index.js';
import { RingBuffer } from './ring-buffer.js';

/** Samples kept per worker: more than the widest sparkline draws, and a minute for the drill-down's charts at 2 updates/s. */
export const WORKER_HISTORY = 120;

export interface HistorySample {
  /** Engine queues; null when the source does not know them. */
  waitingMax: number | null;
  waitingMin: number | null;
  limit: number | null;
  inflight: number | null;
  decisionsPerS: DecisionCounts | null;
  /** The routers' latency over the rate window, in seconds; null when unknown or no request finished. */
  e2eP50: number | null;
  e2eP99: number | null;
  /** e2eP99 is the histogram's last finite bound, the quantile above it (fleet QuantileEstimate). */
  e2eP99LowerBound: boolean;
  ttftP50: number | null;
  /** Each worker's waiting, running and router in-flight counts (null: unknown now). */
  byWorker: ReadonlyArray<
    readonly [url: string, waiting: number | null, running: number | null, inflight: number | null, kvUsage: number | null]
  >;
}

export interface HistorySeries {
  /** Newest last; equal lengths within a group. */
  waitingMax: number[];
  waitingMin: number[];
  /** The queue limit per sample, when known for every sample shown. */
  limit: number[] | null;
  /** Router in-flight, for sources without engine queues. */
  inflight: number[];
  hit: number[];
  miss: number[];
  queued: number[];
  allQueued: number[];
  /** Latency in milliseconds over the samples that had one: end-to-end p50 and p99, TTFT p50 (0 where streams gave none). */
  e2eP50Ms: number[];
  e2eP99Ms: number[];
  /** Per point of e2eP99Ms: drawn at the top bucket's bound, the p99 being above it. */
  e2eP99LowerBound: boolean[];
  ttftP50Ms: number[];
  /** Each worker's recent waiting counts, newest last (null: unknown then), for its sparkline. */
  byWorker: ReadonlyMap<string, ReadonlyArray<number | null>>;
  /** The same for running and router in-flight, for the drill-down. */
  runningByWorker: ReadonlyMap<string, ReadonlyArray<number | null>>;
  inflightByWorker: ReadonlyMap<string, ReadonlyArray<number | null>>;
  kvUsageByWorker: ReadonlyMap<string, ReadonlyArray<number | null>>;
}

export function sampleOf(view: FleetView): HistorySample {
  return {
    waitingMax: view.fleet.waitingMax,
    waitingMin: view.fleet.waitingMin,
    limit: view.router.workerQueueLimit,
    inflight: view.fleet.inflightTotal,
    decisionsPerS: view.decisionsPerS,
    e2eP50: view.latency.window.e2eP50?.value ?? null,
    e2eP99: view.latency.window.e2eP99?.value ?? null,
    e2eP99LowerBound: view.latency.window.e2eP99?.lowerBound ?? false,
    ttftP50: view.latency.window.ttftP50?.value ?? null,
    byWorker: view.workers.map((w) => [w.url, w.waiting, w.running, w.inflight, w.kvUsage ?? null] as const),
  };
}

/**
 * The console's history: one sample per snapshot, the newest `capacity` kept (more
 * than the widest chart draws). Decision rates exist only from the second snapshot
 * on, so they have their own buffer rather than zeros that would read as "no traffic".
 */
export class HistoryBuffers {
  private readonly queues: RingBuffer<HistorySample>;
  private readonly rates: RingBuffer<DecisionCounts>;
  /** Per worker, the last WORKER_HISTORY samples; a worker that leaves the view is forgotten. */
  private readonly workers = new Map<string, RingBuffer<readonly [number | null, number | null, number | null, number | null]>>();

  constructor(capacity = 512) {
    this.queues = new RingBuffer(capacity);
    this.rates = new RingBuffer(capacity);
  }

  push(s: HistorySample): void {
    this.queues.push(s);
    if (s.decisionsPerS) this.rates.push(s.decisionsPerS);
    const seen = new Set<string>();
    for (const [url, waiting, running, inflight, kvUsage] of s.byWorker) {
      seen.add(url);
      let r = this.workers.get(url);
      if (!r) this.workers.set(url, (r = new RingBuffer(WORKER_HISTORY)));
      r.push([waiting, running, inflight, kvUsage]);
    }
    for (const url of this.workers.keys()) if (!seen.has(url)) this.workers.delete(url);
  }

  series(): HistorySeries {
    const q = this.queues.toArray();
    const r = this.rates.toArray();
    const limits = q.map((s) => s.limit);
    return {
      waitingMax: q.filter((s) => s.waitingMax !== null).map((s) => s.waitingMax!),
      waitingMin: q.filter((s) => s.waitingMin !== null).map((s) => s.waitingMin!),
      limit: limits.length > 0 && limits.every((l) => l !== null) ? (limits as number[]).filter((_, i) => q[i]!.waitingMax !== null) : null,
      inflight: q.map((s) => s.inflight ?? 0),
      hit: r.map((d) => d.cache_hit),
      miss: r.map((d) => d.cache_miss),
      queued: r.map((d) => d.cache_worker_queued),
      allQueued: r.map((d) => d.all_queued),
      ...latencyMs(q),
      byWorker: this.perWorker(0),
      runningByWorker: this.perWorker(1),
      inflightByWorker: this.perWorker(2),
      kvUsageByWorker: this.perWorker(3),
    };
  }

  private perWorker(field: 0 | 1 | 2 | 3): Map<string, Array<number | null>> {
    return new Map([...this.workers].map(([url, r]) => [url, r.toArray().map((t) => t[field])]));
  }
}

/** The latency series of the samples that had a figure (a window with no finished request has none). */
function latencyMs(q: readonly HistorySample[]): Pick<HistorySeries, 'e2eP50Ms' | 'e2eP99Ms' | 'e2eP99LowerBound' | 'ttftP50Ms'> {
  const had = q.filter((s) => s.e2eP50 !== null);
  const ms = (v: number | null): number => (v === null ? 0 : Math.round(v * 1000));
  return {
    e2eP50Ms: had.map((s) => ms(s.e2eP50)),
    e2eP99Ms: had.map((s) => ms(s.e2eP99)),
    e2eP99LowerBound: had.map((s) => s.e2eP99LowerBound === true),
    ttftP50Ms: had.map((s) => ms(s.ttftP50)),
  };
}
