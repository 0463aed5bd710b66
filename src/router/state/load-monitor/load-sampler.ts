import { Agent } from 'undici';
import { EngineConnection, getEngineReply, pollEngineLoad } from '../../../engines/index.js';
import type { LoadShape, LoadSource, PollFailureReason } from '../../../engines/index.js';
import type { Worker } from '../../upstream/worker.js';
import type { LoadTable } from './load-table.js';

/**
 * Consecutive polls without any answer (timeout or refused connection) after which a
 * worker is reported unreachable and leaves the pool until it answers again
 * (docs/engine-load.md, "Unanswered polls").
 */
export const DEFAULT_UNREACHABLE_AFTER = 3;

/**
 * Polls a second the sampler allows itself across the fleet. A large fleet is polled
 * less often than --load-poll-interval-ms, each worker at most every half of
 * --load-freshness-ms so that no sample goes stale: 4,096 workers every 2.5 s is
 * 1,638 polls a second, where every 250 ms was 16,384, a core's worth
 * (BENCHMARKS.md, section 15).
 */
export const POLL_BUDGET_PER_S = 1600;
/**
 * The sampler's tick is sized so that each one sends about this many polls: their
 * replies come back together and are read one after another, and a chat that arrives
 * meanwhile waits for them. At 4,096 workers a 25 ms tick sent 41 polls at once: an
 * unloaded router's p95 was 0.27-0.54 ms against 0.17-0.22 with ticks of 4 polls, its
 * p99.9 4.4-15 ms against 3.3-4.1, for one to four points of a core more while idle
 * (BENCHMARKS.md, section 15).
 */
const POLLS_PER_TICK = 4;
/** The finest tick: at most 500 wake-ups a second, whatever the fleet. */
const MIN_TICK_MS = 2;
/** The coarsest tick: a fleet just past SPREAD_FROM still has its polls spread. */
const MAX_TICK_MS = 25;
/** Fleets up to this size are polled whole once an interval: a burst this small queues nothing, and one wake-up costs less than many. */
const SPREAD_FROM = 64;

/** How long the sampler's tick is when `workers` are polled over `roundMs`: about POLLS_PER_TICK polls a tick, within [MIN_TICK_MS, MAX_TICK_MS] and the round. */
export function pollTickMs(workers: number, roundMs: number): number {
  const even = (POLLS_PER_TICK * roundMs) / Math.max(1, workers);
  return Math.min(roundMs, Math.max(MIN_TICK_MS, Math.min(MAX_TICK_MS, even)));
}

/** How often each of `workers` is polled: the configured interval, longer for a fleet over the budget, never past half the freshness window. */
export function pollIntervalMs(intervalMs: number, workers: number, freshnessMs: number): number {
  const forBudget = (1000 * workers) / POLL_BUDGET_PER_S;
  return Math.max(intervalMs, Math.min(forBudget, freshnessMs / 2));
}

export interface SamplerOptions {
  intervalMs: number;
  /** --load-freshness-ms: a large fleet's polls are spread over at most half of it. Default: the interval's 20 times. */
  freshnessMs?: number;
  timeoutMs: number;
  now: () => number;
  /** Called when a worker's load status changes (for logs): ok, or why not. */
  onStatus?: (worker: Worker, status: SampleStatus) => void;
  /** Default DEFAULT_UNREACHABLE_AFTER. */
  unreachableAfter?: number;
  /** Byte cap of one reply; default ENGINE_REPLY_MAX_BYTES. */
  maxReplyBytes?: number;
  /**
   * A worker whose load arrives by push needs no poll
   * (docs/engine-load.md §Load by push). An unreachable worker is polled all the
   * same: only an answer brings it back.
   */
  pushed?: (worker: Worker) => boolean;
}

export type SampleStatus = { ok: true; source: LoadSource; shape: LoadShape } | { ok: false; reason: string };

/** What the admin state and /metrics show about a worker's polls. */
export interface LoadPollStats {
  /** Failed polls by cause. */
  readonly failures: Readonly<Record<PollFailureReason, number>>;
  readonly failuresTotal: number;
  readonly lastError: { readonly reason: PollFailureReason; readonly message: string; readonly atMs: number } | undefined;
  /** Polls in a row that got no answer at all (timeout, connect). */
  readonly unanswered: number;
  /** `unanswered` reached the threshold and no answer has come since. */
  readonly unreachable: boolean;
}

interface WorkerPollState extends LoadPollStats {
  /** The worker's poll connection (http: workers; https: ones go through the agent). */
  conn: EngineConnection | undefined;
  source: number;
  busy: boolean;
  lastOk: boolean | undefined;
  lastReason: string | undefined;
  failures: Record<PollFailureReason, number>;
  failuresTotal: number;
  lastError: { reason: PollFailureReason; message: string; atMs: number } | undefined;
  unanswered: number;
  unreachable: boolean;
}

const noFailures = (): Record<PollFailureReason, number> => ({ connect: 0, http_status: 0, timeout: 0, too_large: 0, unreadable: 0 });

/** For a worker the sampler does not know. */
const NO_STATS: LoadPollStats = Object.freeze({
  failures: Object.freeze(noFailures()),
  failuresTotal: 0,
  lastError: undefined,
  unanswered: 0,
  unreachable: false,
});

/**
 * Polls every worker's load over HTTP with the one engine reader (src/engines):
 * SGLang /v1/loads, else /get_load, else Prometheus /metrics, remembering what
 * worked. Samples are stamped on arrival with the router's clock. A failed poll is
 * counted by cause and leaves the table alone: the last sample stays in force until
 * it is older than the freshness window (docs/engine-load.md, "Freshness"). A
 * hanging worker is not polled again until its previous poll has ended, so it cannot
 * pile up sockets, and every reply is read within a byte cap.
 */
export class LoadSampler {
  private readonly table: LoadTable;
  private readonly opts: SamplerOptions;
  private readonly unreachableAfter: number;
  private readonly agent: Agent;
  private readonly state = new Map<Worker, WorkerPollState>();
  private reachabilityListener: ((worker: Worker, reachable: boolean, stats: LoadPollStats) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Where the turn of polls stands in `state`. */
  private cursor: MapIterator<[Worker, WorkerPollState]> | undefined;

  constructor(table: LoadTable, opts: SamplerOptions) {
    this.table = table;
    this.opts = opts;
    this.unreachableAfter = Math.max(1, opts.unreachableAfter ?? DEFAULT_UNREACHABLE_AFTER);
    // For https: workers (http: ones poll over their own EngineConnection). One
    // connection per worker: a worker is never polled again before its last poll ends,
    // so a second would only sit idle. Connecting counts against the poll's budget too.
    this.agent = new Agent({ connections: 1, keepAliveTimeout: 10_000, pipelining: 1, connect: { timeout: opts.timeoutMs } });
  }

  /** One listener (the worker registry): a worker became unreachable, or answered again. */
  onReachability(listener: (worker: Worker, reachable: boolean, stats: LoadPollStats) => void): void {
    this.reachabilityListener = listener;
  }

  /**
   * Poll `worker` from the next tick. `pending`: it has not answered yet (a worker that
   * joins at runtime), so it counts as unreachable, and its first answer reports it
   * reachable: that is when the registry lets it into the pool.
   */
  add(worker: Worker, pending = false): void {
    const origin = new URL(worker.url);
    this.state.set(worker, {
      conn: origin.protocol === 'http:' ? new EngineConnection(origin) : undefined,
      source: 0,
      busy: false,
      lastOk: undefined,
      lastReason: undefined,
      failures: noFailures(),
      failuresTotal: 0,
      lastError: undefined,
      unanswered: 0,
      unreachable: pending,
    });
  }

  remove(worker: Worker): void {
    this.state.get(worker)?.conn?.close();
    this.state.delete(worker);
  }

  stats(worker: Worker): LoadPollStats {
    return this.state.get(worker) ?? NO_STATS;
  }

  /**
   * Poll a small fleet whole now, a large one over its first round, then each worker
   * in turn: every tick polls its share of the fleet,
   * so that each worker is polled once per pollIntervalMs and the polls are spread
   * evenly over it (a burst of a whole fleet's polls at once would queue requests
   * behind it).
   */
  start(): void {
    // A large fleet's first round is spread too: 4,096 connections opened at once
    // outlast a 1 s poll timeout, and each would count as a failed poll.
    if (this.state.size <= SPREAD_FROM) this.pollDue(this.state.size);
    let credit = this.state.size <= SPREAD_FROM ? 0 : 1;
    let firstRound = this.state.size <= SPREAD_FROM ? 0 : this.state.size;
    let lastTick = performance.now();
    const tick = (): void => {
      if (this.stopped) return;
      const n = this.state.size;
      const every = pollIntervalMs(this.opts.intervalMs, n, this.opts.freshnessMs ?? this.opts.intervalMs * 20);
      // A small fleet is polled whole each interval: one wake-up, not one per worker.
      if (n <= SPREAD_FROM) {
        this.pollDue(n);
        this.timer = setTimeout(tick, every);
        return;
      }
      // The first round goes at twice the budget: every worker sampled within about a second of start.
      const round = firstRound > 0 ? Math.min(every, (500 * n) / POLL_BUDGET_PER_S) : every;
      const tickMs = pollTickMs(n, round);
      // Credit for the time that passed, not the tick asked for: a busy event loop fires
      // a 2 ms timer late, and counting ticks would poll each worker less often than
      // intended. A stall owes at most the coarsest tick's share, not a burst of it all.
      const now = performance.now();
      credit += (n * Math.min(now - lastTick, MAX_TICK_MS)) / round;
      lastTick = now;
      const due = Math.floor(credit);
      credit -= due;
      firstRound = Math.max(0, firstRound - due);
      this.pollDue(due);
      this.timer = setTimeout(tick, tickMs);
    };
    this.timer = setTimeout(tick, firstRound > 0 ? 0 : Math.min(MAX_TICK_MS, this.opts.intervalMs));
  }

  /** Poll the next `count` workers in turn that need a poll (not fed by push, or unreachable). */
  private pollDue(count: number): void {
    const n = this.state.size;
    for (let i = 0; i < count && n > 0; i++) {
      this.cursor ??= this.state.entries();
      let next = this.cursor.next();
      if (next.done) {
        this.cursor = this.state.entries();
        next = this.cursor.next();
        if (next.done) return;
      }
      const [w, st] = next.value;
      if (st.unreachable || this.opts.pushed?.(w) !== true) void this.poll(w);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const st of this.state.values()) st.conn?.close();
    await this.agent.destroy();
  }

  /** Poll one worker now (also used by tests); resolves when the result is applied. */
  async poll(worker: Worker): Promise<void> {
    const st = this.state.get(worker);
    if (!st || st.busy) return;
    st.busy = true;
    try {
      const { timeoutMs, maxReplyBytes } = this.opts;
      const conn = st.conn;
      const result = await pollEngineLoad(
        (path) =>
          conn
            ? conn.get(path, timeoutMs, maxReplyBytes)
            : getEngineReply(worker.url + path, { dispatcher: this.agent, timeoutMs, maxBytes: maxReplyBytes }),
        st.source,
      );
      // Removed meanwhile, or cut short by stop(): nothing to record.
      if (this.stopped || this.state.get(worker) !== st) return;
      if (result.ok) {
        st.source = result.sourceIndex;
        this.table.apply(worker, result.readings, this.opts.now());
        this.answered(worker, st);
        this.report(worker, st, { ok: true, source: result.source, shape: result.shape });
        return;
      }
      st.failures[result.reason]++;
      st.failuresTotal++;
      st.lastError = { reason: result.reason, message: result.detail, atMs: Date.now() };
      if (result.answered) {
        this.answered(worker, st);
      } else if (++st.unanswered >= this.unreachableAfter && !st.unreachable) {
        st.unreachable = true;
        this.reachabilityListener?.(worker, false, st);
      }
      this.report(worker, st, { ok: false, reason: result.detail });
    } finally {
      st.busy = false;
    }
  }

  /** Any HTTP answer proves the engine is alive: it ends an unanswered streak. */
  private answered(worker: Worker, st: WorkerPollState): void {
    st.unanswered = 0;
    if (!st.unreachable) return;
    st.unreachable = false;
    this.reachabilityListener?.(worker, true, st);
  }

  private report(worker: Worker, st: WorkerPollState, status: SampleStatus): void {
    const reason = status.ok ? undefined : status.reason;
    if (st.lastOk === status.ok && st.lastReason === reason) return;
    st.lastOk = status.ok;
    st.lastReason = reason;
    this.opts.onStatus?.(worker, status);
  }
}
