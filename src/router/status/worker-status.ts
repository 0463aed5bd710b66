import type { BasicLoad } from '../policies/index.js';
import type { WorkerRegistry } from '../workers/worker-registry.js';
import type { Worker } from '../upstream/worker.js';
import type { LoadPollStats, LoadPush, LoadPushStats, LoadSampler } from '../state/load-monitor/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { KvEventIndex, KvEventsStatus } from '../state/kv-index/index.js';

/** What the router knows about one worker at one instant. */
export interface WorkerReading {
  readonly worker: Worker;
  /** The fresh engine sample; undefined when there is none (never sampled, or aged out). */
  readonly fresh: BasicLoad | undefined;
  /** Age of the last complete sample, fresh or not; undefined when there never was one. */
  readonly sampleAgeMs: number | undefined;
  readonly healthy: boolean;
  readonly unreachable: boolean;
  readonly polls: LoadPollStats;
  /** Where the load comes from now: pushed by the engine, or polled (docs/engine-load.md §Load by push). */
  readonly loadSource: 'push' | 'poll';
  /** The worker's load channel, when its engine advertises one. */
  readonly push: LoadPushStats | undefined;
  /** The worker's KV event feeds, when the index is built from them. */
  readonly kvEvents: KvEventsStatus | undefined;
}

/** What the event watcher compares between two looks (docs/metrics-and-admin.md §Events). */
export type WatchedWorker = Pick<WorkerReading, 'worker' | 'fresh' | 'unreachable' | 'loadSource'>;

/**
 * Per-worker status as the router's outputs report it: /admin/state and the per-worker
 * gauges of /metrics read the same readings, so the two never disagree on what is
 * fresh, healthy or gated. Off the request path: it walks the fleet.
 */
export class WorkerStatus {
  constructor(
    private readonly table: LoadTable,
    private readonly registry: WorkerRegistry,
    private readonly sampler: LoadSampler,
    private readonly loadPush: LoadPush,
    private readonly kvIndex: KvEventIndex,
  ) {}

  readings(now: number): WorkerReading[] {
    return this.readingsOf(this.registry.workers, 0, this.registry.workers.length, now);
  }

  /** The workers in registration order, as they stand now: a copy, for a walk that yields the loop between slices. */
  workers(): readonly Worker[] {
    return this.registry.workers.slice();
  }

  /** The readings of `workers[from..to)` at `now`: one slice of a fleet read a slice at a time. */
  readingsOf(workers: readonly Worker[], from: number, to: number, now: number): WorkerReading[] {
    const view = this.table.view(now);
    const out: WorkerReading[] = [];
    for (let i = from; i < to && i < workers.length; i++) {
      const worker = workers[i]!;
      out.push({
        worker,
        fresh: view.basic(worker),
        sampleAgeMs: this.table.sampleAge(worker, now),
        healthy: this.registry.isHealthy(worker, now),
        unreachable: this.registry.isUnreachable(worker),
        polls: this.sampler.stats(worker),
        loadSource: this.loadPush.isLive(worker, now) ? 'push' : 'poll',
        push: this.loadPush.stats(worker),
        kvEvents: this.kvIndex.status(worker),
      });
    }
    return out;
  }

  /**
   * The fleet as the event watcher looks at it twice a second: one reused object per
   * look, refilled for each worker, so that a look over 4,096 workers allocates
   * nothing per worker (what `readings` builds is for the admin documents). Valid
   * only while it is being iterated.
   */
  watched(now: number): Iterable<WatchedWorker> {
    const view = this.table.view(now);
    const workers = this.registry.workers;
    const { registry, loadPush } = this;
    const scratch: { -readonly [K in keyof WatchedWorker]: WatchedWorker[K] } = {
      worker: undefined as unknown as Worker,
      fresh: undefined,
      unreachable: false,
      loadSource: 'poll',
    };
    const step = { done: false, value: scratch as WatchedWorker };
    return {
      [Symbol.iterator]: () => {
        let i = 0;
        return {
          next: (): IteratorResult<WatchedWorker> => {
            if (i >= workers.length) return { done: true, value: undefined };
            const worker = workers[i++]!;
            scratch.worker = worker;
            scratch.fresh = view.basic(worker);
            scratch.unreachable = registry.isUnreachable(worker);
            scratch.loadSource = loadPush.isLive(worker, now) ? 'push' : 'poll';
            return step;
          },
        };
      },
    };
  }
}
