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
  /** Per worker, its samples, oldest first (the last WORKER_HISTORY count); a worker that leaves the view is forgotten. */
  private readonly workers = new Map<string, WorkerSamples>();

  constructor(capacity = 512) {
    this.queues = new RingBuffer(capacity);
    this.rates = new RingBuffer(capacity);
  }

  push(s: HistorySample): void {
    // The fleet figures only: kept with every worker's counts, 512 samples of a large fleet were millions of arrays for the collector to walk.
    this.queues.push({ ...s, byWorker: [] });
    if (s.decisionsPerS) this.rates.push(s.decisionsPerS);
    const seen = new Set<string>();
    for (const [url, waiting, running, inflight, kvUsage] of s.byWorker) {
      seen.add(url);
      let r = this.workers.get(url);
      if (!r) this.workers.set(url, (r = { data: new Float64Array(8 * FIELDS), n: 0 }));
      appendSample(r, [waiting, running, inflight, kvUsage]);
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
      ...this.perWorker(),
    };
  }

  /**
   * Each worker's series as of now, read only for the workers a frame asks about (the
   * visible rows, the one in the drill-down): copying every worker's samples for every
   * view was most of the console's work at thousands of workers.
   */
  private perWorker(): Pick<HistorySeries, 'byWorker' | 'runningByWorker' | 'inflightByWorker' | 'kvUsageByWorker'> {
    const upTo = new Map<string, { data: Float64Array; end: number }>();
    for (const [url, r] of this.workers) upTo.set(url, { data: r.data, end: r.n });
    const field = (f: 0 | 1 | 2 | 3): ReadonlyMap<string, ReadonlyArray<number | null>> =>
      new LazyMap(upTo, ({ data, end }) => {
        const out: Array<number | null> = [];
        for (let k = Math.max(0, end - WORKER_HISTORY); k < end; k++) {
          const v = data[k * FIELDS + f]!;
          out.push(Number.isNaN(v) ? null : v);
        }
        return out;
      });
    return { byWorker: field(0), runningByWorker: field(1), inflightByWorker: field(2), kvUsageByWorker: field(3) };
  }
}

type WorkerSample = readonly [waiting: number | null, running: number | null, inflight: number | null, kvUsage: number | null];

/** Numbers per sample: waiting, running, in-flight, KV usage. */
const FIELDS = 4;

/**
 * One worker's samples, FIELDS numbers each (NaN for unknown), in a typed array the
 * collector need not walk: thousands of workers times a hundred samples as small
 * arrays kept it busy. Written only at the end; when full, the newest WORKER_HISTORY
 * samples move to a new array, so that a series taken earlier still reads the one it saw.
 */
interface WorkerSamples {
  data: Float64Array;
  n: number;
}

function appendSample(r: WorkerSamples, sample: WorkerSample): void {
  if ((r.n + 1) * FIELDS > r.data.length) {
    const grown = r.data.length < 2 * WORKER_HISTORY * FIELDS;
    const keep = grown ? r.n : WORKER_HISTORY;
    const next = new Float64Array(grown ? Math.min(2 * WORKER_HISTORY * FIELDS, r.data.length * 2) : r.data.length);
    next.set(r.data.subarray((r.n - keep) * FIELDS, r.n * FIELDS));
    r.data = next;
    r.n = keep;
  }
  const at = r.n * FIELDS;
  for (let f = 0; f < FIELDS; f++) r.data[at + f] = sample[f] ?? Number.NaN;
  r.n++;
}

/** A read-only map whose values are made from `source`'s on first read, and kept. */
class LazyMap<K, S, V> implements ReadonlyMap<K, V> {
  readonly #made = new Map<K, V>();

  constructor(
    private readonly source: ReadonlyMap<K, S>,
    private readonly make: (s: S) => V,
  ) {}

  get size(): number {
    return this.source.size;
  }

  has(key: K): boolean {
    return this.source.has(key);
  }

  get(key: K): V | undefined {
    const hit = this.#made.get(key);
    if (hit !== undefined) return hit;
    const s = this.source.get(key);
    if (s === undefined) return undefined;
    const v = this.make(s);
    this.#made.set(key, v);
    return v;
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }

  *entries(): MapIterator<[K, V]> {
    for (const k of this.source.keys()) yield [k, this.get(k)!];
  }

  keys(): MapIterator<K> {
    return this.source.keys();
  }

  *values(): MapIterator<V> {
    for (const k of this.source.keys()) yield this.get(k)!;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
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
