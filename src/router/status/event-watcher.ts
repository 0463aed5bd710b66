import type { AdminEvent, AdminEventKind } from '../../contract/index.js';
import type { Logger } from '../logging/logger.js';
import type { QueueGate } from '../policies/index.js';
import type { WatchedWorker } from './worker-status.js';

/** Events kept for /admin/state: enough for a console's pane, bounded whatever happens. */
const KEPT = 100;
/** Diversions are counted over this window; a burst begins at BURST_AT of them and ends when the window holds none. */
export const BURST_WINDOW_MS = 5000;
export const BURST_AT = 10;

interface WorkerMark {
  /** The worker the mark is of: a slot's mark is another worker's once that one is gone. */
  readonly worker: object;
  gated: boolean;
  breaker: string;
  unreachable: boolean;
  loadSource: 'push' | 'poll';
  /** The look that last saw the worker: one that a look did not see has left. */
  look: number;
}

/**
 * What changed in the fleet, as events with a time (docs/metrics-and-admin.md
 * §Events): saturation beginning and ending, a worker gated and released, breaker
 * transitions, a worker unreachable and back, load switching between push and poll.
 * The router looks every half second and on each /admin/state; every event also goes
 * to its log, so `serve`'s log pane and `top`'s event pane tell the same story.
 */
export class EventWatcher {
  readonly #log: Logger;
  readonly #gate: QueueGate;
  readonly #events: AdminEvent[] = [];
  /** By the worker's slot: a look over 4,096 workers twice a second finds each mark by index, not by hashing its URL. */
  readonly #marks: Array<WorkerMark | undefined> = [];
  /** Marks held: when a look sees fewer workers, some left, and their marks are dropped. */
  #marked = 0;
  #saturated = false;
  #first = true;
  #look = 0;
  /** [time, diversions so far] at each look within the burst window, oldest first. */
  readonly #diversions: Array<[number, number]> = [];
  /** Diversions total when the current burst began; null outside a burst. */
  #burstFrom: number | null = null;
  #burstAt = 0;

  constructor(log: Logger, gate: QueueGate) {
    this.#log = log;
    this.#gate = gate;
  }

  /** The first event: what the router runs with, so a log or pane starts with the configuration it explains. */
  started(message: string): void {
    this.#emit('router_started', null, message);
  }

  /** A change of membership (docs/metrics-and-admin.md §Events): a worker joined, was admitted, or left. */
  membership(kind: 'worker_added' | 'worker_admitted' | 'worker_removed', worker: string, message: string): void {
    this.#emit(kind, worker, message);
  }

  recent(): AdminEvent[] {
    return [...this.#events];
  }

  /**
   * Compare with the last look; the first look only sets the baseline. Twice a second
   * over the whole fleet, so it allocates nothing per worker: each worker's mark is
   * updated in place, and a worker the look did not see is dropped by its look number.
   */
  check(workers: Iterable<WatchedWorker>, allQueued: boolean, diversions = 0, now = Date.now()): void {
    const gate = this.#gate;
    const quiet = this.#first;
    this.#first = false;
    const look = ++this.#look;
    this.#watchDiversions(diversions, now, quiet);
    if (allQueued !== this.#saturated) {
      this.#saturated = allQueued;
      if (!quiet)
        this.#emit(
          allQueued ? 'saturation_begin' : 'saturation_end',
          null,
          allQueued
            ? `every worker is at or over the queue limit ${limitText(gate)}: all_queued`
            : 'a worker is below the queue limit again',
        );
    }
    let seen = 0;
    for (const r of workers) {
      seen++;
      const worker = r.worker;
      const gated = r.fresh !== undefined && gate.isQueued(r.fresh.waiting, r.fresh.queuedTokens);
      const breaker = worker.breaker.state;
      const mark = this.#marks[worker.slot];
      if (mark === undefined || mark.worker !== worker) {
        if (mark === undefined) this.#marked++;
        this.#marks[worker.slot] = { worker, gated, breaker, unreachable: r.unreachable, loadSource: r.loadSource, look };
        continue;
      }
      mark.look = look;
      if (!quiet) this.#compare(mark, r, gated, breaker);
      mark.gated = gated;
      mark.breaker = breaker;
      mark.unreachable = r.unreachable;
      mark.loadSource = r.loadSource;
    }
    if (seen !== this.#marked) this.#forgetUnseen(look);
  }

  /** Events for what changed in one worker since its mark. */
  #compare(mark: WorkerMark, r: WatchedWorker, gated: boolean, breaker: string): void {
    const gate = this.#gate;
    const url = r.worker.url;
    if (gated !== mark.gated)
      this.#emit(
        gated ? 'worker_gated' : 'worker_released',
        url,
        gated
          ? `waiting ${r.fresh!.waiting} ≥ limit ${limitText(gate)}`
          : `waiting ${r.fresh?.waiting ?? 'unknown'}, below the limit ${limitText(gate)}`,
      );
    if (breaker !== mark.breaker) this.#emit(`breaker_${breaker}` as AdminEventKind, url, `circuit breaker ${mark.breaker} → ${breaker}`);
    if (r.unreachable !== mark.unreachable)
      this.#emit(
        r.unreachable ? 'worker_unreachable' : 'worker_reachable',
        url,
        r.unreachable ? 'load polls go unanswered: out of the pool' : 'answers again: back in the pool',
      );
    if (r.loadSource !== mark.loadSource)
      this.#emit(
        r.loadSource === 'push' ? 'load_push' : 'load_poll',
        url,
        r.loadSource === 'push' ? 'load arrives by push' : 'load push went quiet: polling',
      );
  }

  /** Workers the look did not see have left: a later one in their slot, or the same URL back, starts from a new baseline. */
  #forgetUnseen(look: number): void {
    const marks = this.#marks;
    for (let i = 0; i < marks.length; i++) {
      if (marks[i] === undefined || marks[i]!.look === look) continue;
      marks[i] = undefined;
      this.#marked--;
    }
  }

  /**
   * Diversions (cache_worker_queued decisions) in bursts: one event when the last
   * BURST_WINDOW_MS hold BURST_AT or more, one when a whole window passes without any,
   * with the burst's count and length. A steady trickle below the mark says nothing.
   */
  #watchDiversions(total: number, now: number, quiet: boolean): void {
    const d = this.#diversions;
    d.push([now, total]);
    while (d.length > 1 && d[1]![0] <= now - BURST_WINDOW_MS) d.shift();
    if (quiet) return;
    const inWindow = total - d[0]![1];
    if (this.#burstFrom === null) {
      if (inWindow >= BURST_AT) {
        this.#burstFrom = d[0]![1];
        this.#burstAt = d[0]![0];
        this.#emit(
          'diversion_burst',
          null,
          `${inWindow} requests diverted from their prefix owner in ${((now - d[0]![0]) / 1000).toFixed(1)} s: queues over the limit`,
        );
      }
    } else if (inWindow === 0 && now - d[0]![0] >= BURST_WINDOW_MS) {
      const n = total - this.#burstFrom;
      this.#emit('diversion_burst_end', null, `diversions stopped: ${n} in ${Math.round((now - this.#burstAt) / 1000)} s`);
      this.#burstFrom = null;
    }
  }

  #emit(kind: AdminEventKind, worker: string | null, message: string): void {
    const e: AdminEvent = { at_ms: Date.now(), kind, worker, message };
    this.#events.push(e);
    if (this.#events.length > KEPT) this.#events.shift();
    this.#log.info(message, { event: kind, ...(worker !== null ? { worker } : {}) });
  }
}

/** The limit as an event names it: the number for the fixed gate (the messages operators match), the whole rule for the others. */
function limitText(gate: QueueGate): string {
  return gate.mode === 'fixed' ? String(gate.limit) : `(${gate.rule() ?? 'off'})`;
}
