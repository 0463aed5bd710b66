import { Agent } from 'undici';
import { kvEventsRuleFor, mergePushInfo, replayEndpoints } from '../../engines/index.js';
import type { KvEventsRule } from '../../engines/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { LoadPollStats, LoadPush, LoadSampler } from '../state/load-monitor/index.js';
import type { Logger } from '../logging/logger.js';
import { CircuitBreaker } from '../upstream/circuit-breaker.js';
import { UpstreamPool } from '../upstream/upstream-pool.js';
import { introspectWorker } from './introspect.js';
import { Worker } from '../upstream/worker.js';

/** Workers introspected at once at start (see introspectAll). */
const INTROSPECT_AT_ONCE = 256;

export interface RegistryOptions {
  cbThreshold: number | null;
  cbCoolDownMs: number;
  /** Sockets per worker: above any concurrency we admit, so undici never queues. */
  connections: number;
  introspectTimeoutMs: number;
  /** TCP connect budget per attempt; undici's own default (10 s) may exceed the request timeout. */
  connectTimeoutMs: number;
  now: () => number;
  /** Where workers that do not advertise their KV events publish them (--kv-events). */
  kvEvents: readonly KvEventsRule[];
}

/**
 * The workers, and the routable pool derived from their breakers and their load
 * polls. A worker leaves the pool when its breaker opens and comes back, as a
 * half-open candidate, once the cool-down has passed; it also leaves while its load
 * polls go unanswered (docs/engine-load.md, "Unanswered polls") and comes back at
 * its first answer. The load table keeps the pool's counters.
 */
export class WorkerRegistry {
  readonly workers: Worker[] = [];
  private readonly bySlot: Array<Worker | undefined> = [];
  private readonly byUrlMap = new Map<string, Worker>();
  /** By slot: out of the pool because the breaker opened (until the cool-down passes). */
  private readonly breakerOut: boolean[] = [];
  /** By slot: out of the pool because its load polls go unanswered (or, for a worker that joined at runtime, have not been yet). */
  private readonly unreachable: boolean[] = [];
  /** By slot: leaving the fleet: takes no new requests while its in-flight ones finish. */
  private readonly leaving: boolean[] = [];
  /** By slot: joined at runtime and not yet answered a load poll. */
  private readonly joining: boolean[] = [];
  /** A worker that joined at runtime answered its first load poll and is in the pool. */
  onAdmitted: ((w: Worker) => void) | undefined;
  /** A worker answers its load polls again after going unanswered: it may have restarted, its cache empty. */
  onReturned: ((w: Worker) => void) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  /**
   * Introspection's own connections: one per worker (its questions go one after the
   * other), closed a second after the last. Through the global dispatcher every worker
   * kept a pool and an idle socket for the engine's keep-alive minute after start:
   * 4,096 of each at 4,096 workers, a fifth of the router's heap.
   */
  private readonly introspection: Agent;

  constructor(
    private readonly table: LoadTable,
    private readonly sampler: LoadSampler,
    private readonly loadPush: LoadPush,
    /** Forget what the prefix index says a removed worker holds. */
    private readonly forgetPrefix: (w: Worker) => void,
    private readonly log: Logger,
    private readonly opts: RegistryOptions,
  ) {
    sampler.onReachability((w, reachable, stats) => this.setReachable(w, reachable, stats));
    this.introspection = new Agent({ connections: 1, keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });
  }

  /** Healthy: in the pool as far as breaker and load polls go (the admin state's `healthy`). */
  isHealthy(w: Worker, now: number): boolean {
    return w.breaker.wouldAllow(now) && this.unreachable[w.slot] !== true;
  }

  /** Whether the worker is out of the pool because its load polls go unanswered. */
  isUnreachable(w: Worker): boolean {
    return this.unreachable[w.slot] === true;
  }

  private syncPool(w: Worker): void {
    if (this.bySlot[w.slot] !== w) return;
    this.table.setInPool(w, this.breakerOut[w.slot] !== true && this.unreachable[w.slot] !== true && this.leaving[w.slot] !== true);
  }

  private setReachable(w: Worker, reachable: boolean, stats: LoadPollStats): void {
    if (this.bySlot[w.slot] !== w || this.unreachable[w.slot] === !reachable) return;
    this.unreachable[w.slot] = !reachable;
    if (reachable && this.joining[w.slot] === true) {
      this.joining[w.slot] = false;
      this.syncPool(w);
      this.onAdmitted?.(w);
      return;
    }
    if (reachable) {
      this.log.info('worker answers its load polls again; back in the pool', { worker: w.url });
      this.onReturned?.(w);
    } else {
      this.log.warn('worker does not answer its load polls; out of the pool until it answers', {
        worker: w.url,
        unanswered_polls: stats.unanswered,
        reason: stats.lastError?.message ?? 'no answer',
      });
    }
    this.syncPool(w);
  }

  /**
   * Register a worker. At start every worker is in the pool at once (the fleet as
   * configured); `pending`, for one that joins a running router, keeps it out until its
   * first load answer, so that nothing is routed to an engine the router has not heard.
   */
  add(url: string, pending = false): Worker {
    const slot = this.bySlot.length;
    const pool = new UpstreamPool(url, {
      connections: this.opts.connections,
      connectTimeoutMs: this.opts.connectTimeoutMs,
      idleTimeoutMs: 30_000,
    });
    const breaker = new CircuitBreaker(this.opts.cbThreshold, this.opts.cbCoolDownMs);
    const w = new Worker(url, slot, pool, breaker);
    breaker.onChange = (state) => {
      this.log.warn(`circuit breaker ${state === 'closed' ? 'closed' : state === 'open' ? 'opened' : 'half-open'}`, { worker: url });
      if (state === 'open') {
        this.breakerOut[slot] = true;
        this.syncPool(w);
        const t = setTimeout(() => {
          this.timers.delete(t);
          this.breakerOut[slot] = false;
          this.syncPool(w);
        }, this.opts.cbCoolDownMs);
        this.timers.add(t);
      } else {
        this.breakerOut[slot] = false;
        this.syncPool(w);
      }
    };
    this.workers.push(w);
    this.bySlot.push(w);
    this.byUrlMap.set(url, w);
    this.breakerOut.push(false);
    this.unreachable.push(pending);
    this.leaving.push(false);
    this.joining.push(pending);
    this.table.register(w);
    this.table.setInPool(w, !pending);
    this.sampler.add(w, pending);
    return w;
  }

  /** A worker joining a running router: registered, introspected and sampled; in the pool from its first load answer. */
  join(url: string): Worker {
    const w = this.add(url, true);
    void this.introspect(w);
    return w;
  }

  byUrl(url: string): Worker | undefined {
    return this.byUrlMap.get(url);
  }

  /**
   * Take a worker out of the fleet: out of the pool now, so it gets no new request;
   * removed once its in-flight requests have finished, or at `drainMs` at the latest
   * (what is still running then is cut, as at shutdown). Resolves when it is gone.
   */
  async retire(w: Worker, drainMs: number): Promise<void> {
    if (this.bySlot[w.slot] !== w) return;
    this.leaving[w.slot] = true;
    this.syncPool(w);
    const deadline = this.opts.now() + drainMs;
    while (w.inflight > 0 && this.opts.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    this.remove(w);
  }

  remove(w: Worker): void {
    if (this.bySlot[w.slot] !== w) return;
    this.bySlot[w.slot] = undefined;
    this.byUrlMap.delete(w.url);
    this.workers.splice(this.workers.indexOf(w), 1);
    this.sampler.remove(w);
    this.loadPush.detach(w);
    this.table.forget(w);
    this.forgetPrefix(w);
    w.removed = true;
    void w.pool.destroy();
  }

  /** Called when a worker's facts are learnt (at start, or later for one that was down then). */
  onIntrospected: ((w: Worker) => void) | undefined;

  bySlotIndex(slot: number): Worker | undefined {
    return this.bySlot[slot];
  }

  /**
   * Learn DP sizes and models; keeps retrying, in the background, workers that did not
   * answer. At most INTROSPECT_AT_ONCE workers are asked at a time: 4,096 connections
   * opened at once outlast the 2 s budget on a busy machine, and every worker that
   * timed out would start unknown and be asked again 5 s later.
   */
  async introspectAll(): Promise<void> {
    const workers = [...this.workers];
    let at = 0;
    const next = async (): Promise<void> => {
      while (at < workers.length) await this.introspect(workers[at++]!);
    };
    await Promise.all(Array.from({ length: Math.min(INTROSPECT_AT_ONCE, workers.length) }, next));
  }

  private async introspect(w: Worker): Promise<void> {
    const info = await introspectWorker(w.url, this.opts.introspectTimeoutMs, this.introspection);
    if (this.bySlot[w.slot] !== w) return;
    if (!info.reachable) {
      const t = setTimeout(() => {
        this.timers.delete(t);
        void this.introspect(w);
      }, 5000);
      this.timers.add(t);
      return;
    }
    // An entry with an endpoint replaces what the engine advertises; a replay-only one adds its replay socket.
    const merged = mergePushInfo(info.push, kvEventsRuleFor(this.opts.kvEvents, w.url));
    const pushFrom = merged.pushFrom;
    // Events named by --kv-events carry no block size of their own: the engine's /metrics says it (vLLM).
    const push =
      merged.push !== null && merged.push.blockSize === null && info.blockSize !== null
        ? { ...merged.push, blockSize: info.blockSize }
        : merged.push;
    if (push !== null) {
      const replay = replayEndpoints(w.url, push);
      this.log.info('worker KV event channels', {
        worker: w.url,
        endpoints_from: pushFrom,
        replay: replay.length > 0 ? replay.join(' ') : 'none',
        replay_from: push.replayFrom ?? 'none',
      });
    }
    w.info = {
      dpSize: info.dpSize,
      models: info.models,
      flavor: info.flavor,
      nativeScheduling: info.nativeScheduling,
      push,
      pushFrom,
      simulated: info.simulated,
    };
    this.table.setExpectedRanks(w, info.dpSize);
    this.loadPush.attach(w, push);
    this.table.setUncachedTrusted(w, info.nativeScheduling);
    this.onIntrospected?.(w);
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([
      ...this.workers.map((w) => w.pool.close().catch(() => w.pool.destroy())),
      this.introspection.destroy().catch(() => undefined),
    ]);
  }
}
