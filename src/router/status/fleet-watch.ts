import type { AdminState } from '../../contract/index.js';
import type { RouterMetrics } from '../metrics/index.js';
import type { QueueGate } from '../policies/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { EventWatcher } from './event-watcher.js';
import type { Worker } from '../upstream/worker.js';
import type { WorkerReading, WorkerStatus } from './worker-status.js';

export interface FleetWatchDeps {
  readonly status: WorkerStatus;
  readonly events: EventWatcher;
  readonly table: LoadTable;
  readonly gate: QueueGate;
  readonly metrics: RouterMetrics;
  /** The model label the metrics are booked under. */
  readonly model: () => string;
}

/**
 * The fleet as the router's outputs see it, off the request path: the per-worker
 * readings, the two alerts (every worker queued, the gate blind), and the look for
 * events (docs/metrics-and-admin.md §Events) the router takes twice a second and on
 * each /admin/state.
 */
export class FleetWatch {
  constructor(private readonly d: FleetWatchDeps) {}

  /** The first event: what the router runs with. */
  started(message: string): void {
    this.d.events.started(message);
  }

  /** A worker joined, was admitted, or left. */
  membership(kind: 'worker_added' | 'worker_admitted' | 'worker_removed', worker: string, message: string): void {
    this.d.events.membership(kind, worker, message);
  }

  readings(now: number): WorkerReading[] {
    return this.d.status.readings(now);
  }

  /** The workers as they stand, and one slice's readings: for a document read a slice at a time. */
  workers(): readonly Worker[] {
    return this.d.status.workers();
  }

  readingsOf(workers: readonly Worker[], from: number, to: number, now: number): WorkerReading[] {
    return this.d.status.readingsOf(workers, from, to, now);
  }

  /** One look for events: over `readings` when an admin document has just built them, else over the fleet as it stands. */
  look(now: number, readings?: readonly WorkerReading[]): void {
    const diversions = this.d.metrics.cacheDecisions.get([this.d.model(), 'cache_worker_queued']);
    this.d.events.check(readings ?? this.d.status.watched(now), this.allQueued(now), diversions);
  }

  alerts(now: number): AdminState['alerts'] {
    return { all_queued: this.allQueued(now), gate_inert: this.d.gate.inert(this.d.table.view(now)) };
  }

  recentEvents(): AdminState['events'] {
    return this.d.events.recent();
  }

  private allQueued(now: number): boolean {
    return this.d.gate.allQueued(this.d.table.view(now));
  }
}
