import type { LoadView, PolicyWorker, PoolState, QueueGate } from '../policies/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { Worker } from '../upstream/worker.js';

type View = PoolState & LoadView;

/**
 * The picker's side of the fleet: how a worker is named on the wire (`ip:port`, as
 * GIE's protocol has endpoints), the pool narrowed to a gateway's subset hint, and
 * the engine that answers a request that is not a generation (docs/endpoint-picker.md
 * §Subsets and other requests).
 */
export class EndpointChoice {
  readonly #names = new WeakMap<PolicyWorker, string>();

  constructor(
    private readonly table: LoadTable,
    private readonly gate: QueueGate,
  ) {}

  /** The worker as an endpoint: its URL's host and port (an IPv6 host in brackets), computed once per worker. */
  endpoint(worker: PolicyWorker): string {
    let name = this.#names.get(worker);
    if (name === undefined) {
      name = endpointOf(worker.id);
      this.#names.set(worker, name);
    }
    return name;
  }

  /**
   * The pool narrowed to the endpoints a gateway allows: the same counters the load
   * table keeps, counted over the subset. A scan of the subset, made only for a
   * request that carries a hint.
   */
  narrow(view: View, subset: ReadonlySet<string>): View {
    const workers: PolicyWorker[] = [];
    const unqueued: PolicyWorker[] = [];
    let sampled = 0;
    let queued = 0;
    let belowFloor = 0;
    const floor = this.gate.floor;
    for (const w of view.workers) {
      if (!subset.has(this.endpoint(w))) continue;
      workers.push(w);
      const b = view.basic(w);
      if (b === undefined) {
        unqueued.push(w);
        continue;
      }
      sampled++;
      if (this.gate.isQueued(b.waiting, b.queuedTokens)) queued++;
      else unqueued.push(w);
      if (floor !== null && b.waiting < floor) belowFloor++;
    }
    return {
      workers,
      unqueued,
      sampled,
      queued,
      belowFloor,
      version: view.version,
      // The clock the view was fixed at: an engine's lateness is read against it.
      ...(view.at !== undefined ? { at: view.at } : {}),
      basic: (w) => view.basic(w),
      native: (w) => view.native(w),
    };
  }

  /** A request that is not a generation: the routable worker with the fewest requests in flight, in the subset if one is given. */
  any(subset: ReadonlySet<string> | undefined): Worker | undefined {
    const view = this.table.view(performance.now());
    let best: Worker | undefined;
    for (const w of view.workers as readonly Worker[]) {
      if (subset !== undefined && !subset.has(this.endpoint(w))) continue;
      if (best === undefined || w.inflight < best.inflight) best = w;
    }
    return best;
  }
}

/** `http://10.0.0.7:8000` → `10.0.0.7:8000`; the scheme's port when the URL names none. */
export function endpointOf(url: string): string {
  const u = new URL(url);
  const port = u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : '80';
  return `${u.hostname}:${port}`;
}
