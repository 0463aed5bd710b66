import { isBelowFloor } from '../../../contract/index.js';
import { MAX_RANKS_PER_WORKER } from '../../../engines/index.js';
import type { RankReading, Readings } from '../../../engines/index.js';
import type { SchedulingNativeLoad } from '../../policies/cache-aware/pressure.js';
import { NO_QUEUE_GATE, type QueueGate } from '../../policies/queue-gate.js';
import type { BasicLoad, LoadView, NativeLoad, PolicyWorker, PoolState } from '../../policies/types.js';

export type { RankReading, Readings };

interface MutableNative extends SchedulingNativeLoad {
  running: number;
  waiting: number;
  usedTokens: number;
  maxTotalTokens: number;
  capturedAt: number;
  waitingUncachedTokens: number;
  queuedTokens: number | undefined;
  totalTokens: number;
  maxRunningRequests: number;
  estimatedPrefillQueueMs: number | undefined;
  uncachedTokensComparable: boolean;
}

const NO_READINGS: Readings = [];

class Entry {
  /** The last poll's ranks, replaced whole by each sample (never merged), at most MAX_RANKS_PER_WORKER. */
  readings: Readings = NO_READINGS;
  /** Router receive time of `readings`. */
  at = 0;
  expectedRanks: number | undefined;
  /** The engine schedules cache-aware: its uncached-token fields are comparable. */
  uncachedTrusted = false;
  /** All required ranks present: the aggregates below are meaningful. */
  complete = false;
  readonly basic: MutableNative = blankNative();
  /** Every required rank reports capacity (running and token limits). */
  hasNative = false;
  /** Receive time + freshness window. */
  freshUntil = -Infinity;
  inPool = false;
  // Status as last counted in the pool counters.
  fresh = false;
  queued = false;
  belowFloor = false;
  /** Its waiting count in the pool's sum (0 without a fresh sample). */
  countedWaiting = 0;
  constructor(readonly worker: PolicyWorker) {}
}

/**
 * Engine-reported load per worker and DP rank (the reference router's table, fed by
 * HTTP polling instead of ZMQ): ranks are summed, a worker has a sample only when
 * every required rank is in it and it is younger than the freshness window, and
 * receive times are the router's own. One poll reads every rank at once, so each
 * sample replaces the worker's rank set whole: ranks an engine stopped reporting are
 * gone, and memory per worker is bounded (docs/engine-load.md, "DP ranks"). Required
 * ranks are the engine's advertised DP size when known, else every rank in the
 * sample. Missing or malformed data is "unknown", never zero; a failed poll changes
 * nothing here, the sample simply ages out (docs/engine-load.md, "Freshness").
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
  private gate: QueueGate = NO_QUEUE_GATE;
  private now = 0;
  private nextExpiry = Infinity;
  private poolWorkers: PolicyWorker[] = [];
  private tier: PolicyWorker[] = [];

  version = 0;
  sampled = 0;
  queued = 0;
  belowFloor = 0;
  /** Waiting requests summed over the pool's fresh workers: what an auto gate follows. */
  waitingSum = 0;
  private following = false;

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
  /** The time the last view was fixed at (router clock, ms). */
  get at(): number {
    return this.now;
  }

  basic(worker: PolicyWorker): BasicLoad | undefined {
    const e = this.entries[worker.slot];
    return e && e.complete && this.now <= e.freshUntil ? e.basic : undefined;
  }

  /**
   * Capacity data whatever the engine's schedule policy; `uncachedTokensComparable`
   * on the result says whether the pressure comparisons may use it.
   */
  native(worker: PolicyWorker): NativeLoad | undefined {
    const e = this.entries[worker.slot];
    return e && e.complete && e.hasNative && this.now <= e.freshUntil ? e.basic : undefined;
  }

  /** The engine's native fields as last reported, fresh or not (for display). */
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
  /** The router's queue gate: the pool's queued and below-floor counters are counted against it. */
  setGate(gate: QueueGate): void {
    this.gate = gate;
    this.recountAll();
    this.followGate();
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
   * Whether the worker's waiting-uncached tokens may drive the pressure comparisons.
   * SGLang reports them net of its prefix cache only under a cache-aware
   * --schedule-policy (raw prompt lengths under fcfs). Capacity fields are used
   * either way (docs/engine-load.md, "Capacity and pressure").
   */
  setUncachedTrusted(worker: PolicyWorker, trusted: boolean): void {
    const e = this.entries[worker.slot];
    if (!e || e.uncachedTrusted === trusted) return;
    e.uncachedTrusted = trusted;
    this.aggregate(e);
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
    this.followGate();
  }

  // ---- samples ----
  /**
   * Apply one poll's readings, received at `at`: they replace the worker's rank set.
   * Readings are ascending by rank without repeats (as the engine reader returns
   * them); more than MAX_RANKS_PER_WORKER are refused (false), the table unchanged.
   */
  apply(worker: PolicyWorker, readings: Readings, at: number): boolean {
    const e = this.entries[worker.slot];
    if (!e || readings.length > MAX_RANKS_PER_WORKER) return false;
    e.at = at;
    // The same readings again (a pushed heartbeat hands on the array it gave last
    // time, a poll of a steady engine reads the same figures): the sums stand, only
    // the sample's time moves, and the new array dies young. Kept instead, each
    // worker's would outlive two scavenges and be promoted: at 4,096 workers polled
    // every 2.5 s, 0.5 MB a second of old space to collect
    // (docs/dependencies.md §What a large fleet keeps alive).
    if (readings === e.readings || sameReadings(readings, e.readings)) this.stamp(e);
    else {
      e.readings = readings;
      this.aggregate(e);
    }
    this.version++;
    this.recount(e);
    return true;
  }

  /** Forget the worker's load now. A failed poll does not call this: samples age out instead. */
  markUnknown(worker: PolicyWorker): void {
    const e = this.entries[worker.slot];
    if (!e || e.readings.length === 0) return;
    e.readings = NO_READINGS;
    this.aggregate(e);
    this.version++;
    this.recount(e);
  }

  /** Age of the worker's sample in ms, or undefined without one. */
  sampleAge(worker: PolicyWorker, now: number): number | undefined {
    const e = this.entries[worker.slot];
    if (!e || !e.complete) return undefined;
    return now - e.at;
  }

  /** Ranks held for the worker (bounded by MAX_RANKS_PER_WORKER). */
  rankCount(worker: PolicyWorker): number {
    return this.entries[worker.slot]?.readings.length ?? 0;
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
    // One look at the gate after the pass, not one per worker.
    const following = this.following;
    this.following = true;
    for (const e of this.entries) if (e) this.recount(e);
    this.following = following;
    this.followGate();
  }

  // ---- internals ----
  private aggregate(e: Entry): void {
    const b = e.basic;
    const n = e.expectedRanks;
    let counted = 0;
    let ordered = true;
    let previous = -1;
    let native = true;
    let uncached = e.uncachedTrusted;
    let reported = true;
    b.running = b.waiting = b.usedTokens = b.maxTotalTokens = 0;
    b.waitingUncachedTokens = b.totalTokens = b.maxRunningRequests = 0;
    for (const [rank, r] of e.readings) {
      if (rank <= previous) ordered = false;
      previous = rank;
      // With an advertised DP size, the ranks beyond it are not the worker's.
      if (n !== undefined && rank >= n) continue;
      counted++;
      b.running += r.running;
      b.waiting += r.waiting;
      b.usedTokens += r.usedTokens ?? 0;
      b.maxTotalTokens += r.maxTotalTokens ?? 0;
      const cap = r.maxTotalTokens ?? 0;
      const maxRunning = r.maxRunningRequests ?? 0;
      if (r.totalTokens !== undefined && cap > 0 && maxRunning > 0) {
        b.totalTokens += r.totalTokens;
        b.maxRunningRequests += maxRunning;
      } else {
        native = false;
      }
      if (r.waitingUncachedTokens !== undefined) b.waitingUncachedTokens += r.waitingUncachedTokens;
      else uncached = reported = false;
    }
    b.queuedTokens = reported && counted > 0 ? b.waitingUncachedTokens : undefined;
    // Ranks ascending and unique (anything else is no sample), so counting them is
    // enough to know every required one is here.
    const complete = ordered && (n === undefined ? counted > 0 : counted === n);
    e.complete = complete;
    e.hasNative = complete && native;
    b.uncachedTokensComparable = uncached;
    b.estimatedPrefillQueueMs = undefined;
    this.stamp(e);
  }

  /** Date the aggregate by the sample's time: when it was captured, and until when it is fresh. */
  private stamp(e: Entry): void {
    e.basic.capturedAt = e.complete ? e.at : 0;
    e.freshUntil = e.complete ? e.at + this.freshnessMs : -Infinity;
  }

  /** Recompute a worker's status at the current time and patch the counters. */
  private recount(e: Entry): void {
    const fresh = e.complete && this.now <= e.freshUntil;
    const queued = fresh && this.gate.isQueued(e.basic.waiting, e.basic.queuedTokens);
    const below = fresh && isBelowFloor(e.basic.waiting, this.gate.floor);
    const waiting = fresh ? e.basic.waiting : 0;
    if (fresh && e.freshUntil < this.nextExpiry) this.nextExpiry = e.freshUntil;
    if (fresh === e.fresh && queued === e.queued && below === e.belowFloor && waiting === e.countedWaiting) return;
    if (e.inPool) this.uncount(e);
    e.fresh = fresh;
    e.queued = queued;
    e.belowFloor = below;
    e.countedWaiting = waiting;
    if (e.inPool) this.count(e);
    this.followGate();
  }

  /**
   * Let an auto gate move its limit with the pool's waiting sum, and recount who is
   * queued when it does: a pass over the table only when the limit changes, never per
   * request (docs/routing.md §Gate modes).
   */
  private followGate(): void {
    if (this.following) return;
    this.following = true;
    while (this.gate.follow(this.waitingSum, this.sampled)) this.recountAll();
    this.following = false;
  }

  private recountAll(): void {
    for (const e of this.entries) if (e) this.recount(e);
  }

  private count(e: Entry): void {
    this.waitingSum += e.countedWaiting;
    if (e.fresh) this.sampled++;
    if (e.queued) this.queued++;
    else insertBySlot(this.tier, e.worker);
    if (e.belowFloor) this.belowFloor++;
  }

  private uncount(e: Entry): void {
    this.waitingSum -= e.countedWaiting;
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
    queuedTokens: undefined,
    totalTokens: 0,
    maxRunningRequests: 0,
    estimatedPrefillQueueMs: undefined,
    uncachedTokensComparable: false,
  };
}

/** Every figure of a rank's reading: the compiler rejects a list that misses one, so a field added later is compared too. */
const READING_FIELDS = [
  'running',
  'waiting',
  'usedTokens',
  'maxTotalTokens',
  'totalTokens',
  'maxRunningRequests',
  'waitingUncachedTokens',
] as const satisfies ReadonlyArray<keyof RankReading>;
const everyFieldListed: Exclude<keyof RankReading, (typeof READING_FIELDS)[number]> extends never ? true : never = true;
void everyFieldListed;

/** Whether two samples carry the same ranks with the same figures. */
function sameReadings(a: Readings, b: Readings): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  for (let i = 0; i < a.length; i++) {
    const [rank, x] = a[i]!;
    const [otherRank, y] = b[i]!;
    if (rank !== otherRank) return false;
    for (const f of READING_FIELDS) if (x[f] !== y[f]) return false;
  }
  return true;
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
