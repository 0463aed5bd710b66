import type { BasicLoad, LoadView, NativeLoad, PolicyWorker, PoolState } from '../../policies/types.js';

/** One DP rank's reading, in the engines' own terms. */
export interface RankReading {
  running: number;
  waiting: number;
  usedTokens: number;
  maxTotalTokens: number;
  /** Present when the engine publishes scheduling detail (SGLang /v1/loads). */
  native?: { waitingUncachedTokens: number; totalTokens: number; maxRunningRequests: number };
}

interface RankSample {
  at: number;
  reading: RankReading;
}

interface MutableNative {
  running: number;
  waiting: number;
  usedTokens: number;
  maxTotalTokens: number;
  capturedAt: number;
  waitingUncachedTokens: number;
  totalTokens: number;
  maxRunningRequests: number;
  estimatedPrefillQueueMs: number | undefined;
}

class Entry {
  readonly ranks = new Map<number, RankSample>();
  expectedRanks: number | undefined;
  /** Native fields are in scheduling units (the engine schedules cache-aware). */
  nativeTrusted = false;
  /** All required ranks present: the aggregates below are meaningful. */
  complete = false;
  readonly basic: MutableNative = blankNative();
  hasNative = false;
  /** Oldest required rank's receive time + freshness window. */
  freshUntil = -Infinity;
  inPool = false;
  // Status as last counted in the pool counters.
  fresh = false;
  queued = false;
  belowFloor = false;
  constructor(readonly worker: PolicyWorker) {}
}

/**
 * Engine-reported load per worker and DP rank (the reference router's table, fed by
 * HTTP polling instead of ZMQ): ranks are summed, a worker has a sample only when
 * every required rank reported within the freshness window, and receive times are
 * the router's own. Required ranks are the engine's advertised DP size when known,
 * else every rank seen. Missing or malformed data is "unknown", never zero.
 *
 * The table also keeps, incrementally, the routable pool's counters (sampled,
 * queued at the limit, below the floor) and its gate-admitted tier, so whole-pool
 * questions cost O(1) per request. Freshness expires with time rather than with an
 * event; `refresh(now)` re-evaluates the pool only when some counted sample could
 * have expired since the last look (amortised O(1); one pass every few seconds).
 */
export class LoadTable implements LoadView, PoolState {
  private readonly freshnessMs: number;
  private readonly entries: Array<Entry | undefined> = [];
  private limit: number | null = null;
  private floor: number | null = null;
  private now = 0;
  private nextExpiry = Infinity;
  private poolWorkers: PolicyWorker[] = [];
  private tier: PolicyWorker[] = [];

  version = 0;
  sampled = 0;
  queued = 0;
  belowFloor = 0;

  constructor(freshnessMs: number) {
    this.freshnessMs = freshnessMs;
  }

  // ---- PoolState ----
  get workers(): readonly PolicyWorker[] {
    return this.poolWorkers;
  }

  get unqueued(): readonly PolicyWorker[] {
    return this.tier;
  }

  // ---- LoadView ----
  basic(worker: PolicyWorker): BasicLoad | undefined {
    const e = this.entries[worker.slot];
    return e && e.complete && this.now <= e.freshUntil ? e.basic : undefined;
  }

  native(worker: PolicyWorker): NativeLoad | undefined {
    const e = this.entries[worker.slot];
    return e && e.complete && e.hasNative && e.nativeTrusted && this.now <= e.freshUntil ? e.basic : undefined;
  }

  /** The engine's native fields as last reported, trusted or not (for display). */
  lastNative(worker: PolicyWorker): NativeLoad | undefined {
    const e = this.entries[worker.slot];
    return e && e.complete && e.hasNative ? e.basic : undefined;
  }

  isInPool(worker: PolicyWorker): boolean {
    return this.entries[worker.slot]?.inPool === true;
  }

  /** Fix "now" for one selection and bring the pool counters up to it. */
  view(now: number): this {
    this.refresh(now);
    return this;
  }

  // ---- configuration and membership ----
  setGate(limit: number | null, floor: number | null): void {
    this.limit = limit;
    this.floor = floor;
    this.recountAll();
  }

  register(worker: PolicyWorker): void {
    this.entries[worker.slot] = new Entry(worker);
    this.version++;
  }

  /** Drop every rank and expectation of a removed worker. */
  forget(worker: PolicyWorker): void {
    const e = this.entries[worker.slot];
    if (!e) return;
    if (e.inPool) this.setInPool(worker, false);
    this.entries[worker.slot] = undefined;
    this.version++;
  }

  /**
   * Whether the worker's native fields may drive capacity admission and the pressure
   * guard. SGLang reports waiting-uncached tokens in scheduling units only under a
   * cache-aware --schedule-policy, and withholds them from routers otherwise; the
   * fields are kept either way, but used only when trusted.
   */
  setNativeTrusted(worker: PolicyWorker, trusted: boolean): void {
    const e = this.entries[worker.slot];
    if (!e || e.nativeTrusted === trusted) return;
    e.nativeTrusted = trusted;
    this.version++;
  }

  setExpectedRanks(worker: PolicyWorker, ranks: number | undefined): void {
    const e = this.entries[worker.slot];
    if (!e) return;
    e.expectedRanks = ranks;
    this.aggregate(e);
    this.version++;
    this.recount(e);
  }

  /**
   * Pool membership (healthy and serving the model). The pool keeps registration
   * order, which is the order ties resolve in; membership changes are rare, so the
   * arrays are rebuilt rather than patched.
   */
  setInPool(worker: PolicyWorker, inPool: boolean): void {
    const e = this.entries[worker.slot];
    if (!e || e.inPool === inPool) return;
    if (e.inPool) this.uncount(e);
    e.inPool = inPool;
    if (inPool) this.count(e);
    this.rebuildPool();
  }

  // ---- samples ----
  /** Apply one poll's readings (all the ranks it returned), received at `at`. */
  apply(worker: PolicyWorker, readings: ReadonlyArray<readonly [rank: number, reading: RankReading]>, at: number): void {
    const e = this.entries[worker.slot];
    if (!e) return;
    for (const [rank, reading] of readings) e.ranks.set(rank, { at, reading });
    this.aggregate(e);
    this.version++;
    this.recount(e);
  }

  /** The worker answered garbage or nothing: its load is unknown from now on. */
  markUnknown(worker: PolicyWorker): void {
    const e = this.entries[worker.slot];
    if (!e || e.ranks.size === 0) return;
    e.ranks.clear();
    this.aggregate(e);
    this.version++;
    this.recount(e);
  }

  /** Age of the worker's sample in ms (oldest required rank), or undefined without one. */
  sampleAge(worker: PolicyWorker, now: number): number | undefined {
    const e = this.entries[worker.slot];
    if (!e || !e.complete) return undefined;
    return now - e.basic.capturedAt;
  }

  /** The last complete aggregate whether fresh or not (for display of stale data). */
  lastKnown(worker: PolicyWorker): BasicLoad | undefined {
    const e = this.entries[worker.slot];
    return e && e.complete ? e.basic : undefined;
  }

  /** Re-evaluate freshness if some counted sample may have expired by `now`. */
  refresh(now: number): void {
    this.now = now;
    if (now <= this.nextExpiry) return;
    this.nextExpiry = Infinity;
    for (const e of this.entries) if (e) this.recount(e);
  }

  // ---- internals ----
  private aggregate(e: Entry): void {
    const b = e.basic;
    let required: Iterable<number>;
    if (e.expectedRanks !== undefined) {
      const n = e.expectedRanks;
      required = (function* () {
        for (let r = 0; r < n; r++) yield r;
      })();
    } else {
      required = e.ranks.keys();
    }
    let complete = e.ranks.size > 0;
    let native = true;
    let oldest = Infinity;
    b.running = b.waiting = b.usedTokens = b.maxTotalTokens = 0;
    b.waitingUncachedTokens = b.totalTokens = b.maxRunningRequests = 0;
    for (const rank of required) {
      const s = e.ranks.get(rank);
      if (!s) {
        complete = false;
        break;
      }
      const r = s.reading;
      b.running += r.running;
      b.waiting += r.waiting;
      b.usedTokens += r.usedTokens;
      b.maxTotalTokens += r.maxTotalTokens;
      if (r.native && r.maxTotalTokens > 0 && r.native.maxRunningRequests > 0) {
        b.waitingUncachedTokens += r.native.waitingUncachedTokens;
        b.totalTokens += r.native.totalTokens;
        b.maxRunningRequests += r.native.maxRunningRequests;
      } else {
        native = false;
      }
      if (s.at < oldest) oldest = s.at;
    }
    e.complete = complete;
    e.hasNative = complete && native;
    b.capturedAt = complete ? oldest : 0;
    b.estimatedPrefillQueueMs = undefined;
    e.freshUntil = complete ? oldest + this.freshnessMs : -Infinity;
  }

  /** Recompute a worker's status at the current time and patch the counters. */
  private recount(e: Entry): void {
    const fresh = e.complete && this.now <= e.freshUntil;
    const queued = fresh && this.limit !== null && e.basic.waiting >= this.limit;
    const below = fresh && this.floor !== null && e.basic.waiting < this.floor;
    if (fresh && e.freshUntil < this.nextExpiry) this.nextExpiry = e.freshUntil;
    if (fresh === e.fresh && queued === e.queued && below === e.belowFloor) return;
    if (e.inPool) this.uncount(e);
    e.fresh = fresh;
    e.queued = queued;
    e.belowFloor = below;
    if (e.inPool) this.count(e);
  }

  private recountAll(): void {
    for (const e of this.entries) if (e) this.recount(e);
  }

  private count(e: Entry): void {
    if (e.fresh) this.sampled++;
    if (e.queued) this.queued++;
    else insertBySlot(this.tier, e.worker);
    if (e.belowFloor) this.belowFloor++;
  }

  private uncount(e: Entry): void {
    if (e.fresh) this.sampled--;
    if (e.queued) this.queued--;
    else removeBySlot(this.tier, e.worker);
    if (e.belowFloor) this.belowFloor--;
  }

  private rebuildPool(): void {
    const pool: PolicyWorker[] = [];
    for (const e of this.entries) if (e?.inPool) pool.push(e.worker);
    this.poolWorkers = pool;
  }
}

function blankNative(): MutableNative {
  return {
    running: 0,
    waiting: 0,
    usedTokens: 0,
    maxTotalTokens: 0,
    capturedAt: 0,
    waitingUncachedTokens: 0,
    totalTokens: 0,
    maxRunningRequests: 0,
    estimatedPrefillQueueMs: undefined,
  };
}

/** Where a worker with this slot sits, or would sit, in a slot-ordered list. */
function slotPosition(list: readonly PolicyWorker[], slot: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.slot < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Keep the tier in registration (slot) order: ties resolve in pool order. */
function insertBySlot(list: PolicyWorker[], w: PolicyWorker): void {
  list.splice(slotPosition(list, w.slot), 0, w);
}

function removeBySlot(list: PolicyWorker[], w: PolicyWorker): void {
  const at = slotPosition(list, w.slot);
  if (list[at] === w) list.splice(at, 1);
}
