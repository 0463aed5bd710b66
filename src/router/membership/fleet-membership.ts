import type { RouterConfig } from '../../config/index.js';
import { discoveryFor } from '../discovery/discovery-for.js';
import type { Discovery, DiscoveryMode } from '../discovery/discovery.js';
import type { Logger } from '../logging/logger.js';
import type { RouterMetrics } from '../metrics/index.js';
import type { PrefixState } from '../prefix-source/prefix-state.js';
import type { PrefixIndex } from '../state/prefix-index/index.js';
import type { FleetWatch } from '../status/fleet-watch.js';
import type { Worker } from '../upstream/worker.js';
import type { ServedModel } from '../workers/served-model.js';
import type { WorkerRegistry } from '../workers/worker-registry.js';

/** What /admin/workers changes: who owns the fleet, and the two changes. */
export interface Membership {
  /** `static`: the configured list and this API; otherwise the discovery mode that owns the fleet. */
  owner(): 'static' | DiscoveryMode;
  /** Whether the router was started with --admin-token: without one, membership cannot change over HTTP. */
  readonly tokenConfigured: boolean;
  add(url: string): 'added' | 'exists';
  /** Out of the pool now; gone once its in-flight requests end. Undefined when no such worker. */
  remove(url: string): { inflight: number } | undefined;
}

export interface MembershipParts {
  readonly config: RouterConfig;
  readonly registry: WorkerRegistry;
  readonly index: PrefixIndex;
  readonly prefix: PrefixState;
  readonly watch: FleetWatch;
  readonly metrics: RouterMetrics;
  readonly served: ServedModel;
  readonly log: Logger;
  /** Whether the router has started: before it, a worker joins as part of the fleet at start. */
  readonly started: () => boolean;
}

/**
 * Who is in the fleet, and how that changes while the router runs
 * (docs/http-edge.md §Membership): the configured workers, then the admin API's
 * additions and removals, or a discovery mode's (DNS, Kubernetes) when one owns the
 * fleet; a worker that joined counts once it answers its first load poll.
 */
export class FleetMembership implements Membership {
  readonly tokenConfigured: boolean;
  /** --dns-discovery or --service-discovery: the fleet as DNS or the Kubernetes API lists it. */
  readonly discovery: Discovery | undefined;
  readonly #p: MembershipParts;

  constructor(p: MembershipParts) {
    this.#p = p;
    const { config, registry, index, prefix, log } = p;
    this.tokenConfigured = config.adminToken !== null && config.adminToken !== '';
    // Owners in the digest are named by URL, so replicas with the same workers compare.
    for (const url of config.workerUrls) index.setOwnerTag(registry.add(url).slot, url);
    this.discovery = discoveryFor(
      config,
      { urls: () => registry.workers.map((w) => w.url), add: (u) => this.add(u), remove: (u) => void this.remove(u) },
      log,
    );
    registry.onAdmitted = (w) => this.#admitted(w);
    // An engine that stopped answering and came back has most likely restarted with an empty
    // cache. The events index learns that from its sequences starting again; the requests
    // index has only this to go by, so it forgets what it said the worker held.
    registry.onReturned = (w) => {
      if (prefix.source !== 'requests') return;
      index.forgetWorker(w.slot);
      prefix.lookup.predicted?.forgetWorker(w);
      log.info('worker is back after unanswered load polls: the prefixes routed to it are forgotten (it may have restarted)', {
        worker: w.url,
      });
    };
  }

  /** `static`: the configured list and /admin/workers; otherwise the discovery mode that owns the fleet. */
  owner(): 'static' | DiscoveryMode {
    return this.discovery?.mode ?? 'static';
  }

  /**
   * A worker joins the running router: introspected, sampled and subscribed to its push
   * channels as at start, and in the pool from its first load answer. `exists` when its
   * URL is in the fleet already.
   */
  add(url: string): 'added' | 'exists' {
    const { registry, index, watch } = this.#p;
    if (registry.byUrl(url) !== undefined) return 'exists';
    // Before the router has started, a worker is part of the fleet at start.
    const atStart = !this.#p.started();
    const w = atStart ? registry.add(url) : registry.join(url);
    index.setOwnerTag(w.slot, url);
    watch.membership('worker_added', url, atStart ? 'worker found at start' : 'worker added: in the pool once it answers a load poll');
    return 'added';
  }

  /**
   * A worker leaves: out of the pool at once, so it takes no new request; its in-flight
   * requests finish, within --shutdown-drain-secs, and then its index entries, pools,
   * subscriptions and metric series go. `gone` settles then. Undefined when no such worker.
   */
  remove(url: string): { inflight: number; gone: Promise<void> } | undefined {
    const { registry, metrics, watch, config } = this.#p;
    const w = registry.byUrl(url);
    if (w === undefined) return undefined;
    const inflight = w.inflight;
    const gone = registry.retire(w, config.shutdownDrainSecs * 1000).then(() => {
      metrics.forgetWorker(url);
      watch.membership(
        'worker_removed',
        url,
        `worker removed: out of the fleet, ${inflight} request${inflight === 1 ? '' : 's'} were in flight`,
      );
    });
    return { inflight, gone };
  }

  /** A worker that joined at runtime answered its first load poll: it is in the pool, and may tell the model. */
  #admitted(w: Worker): void {
    this.#p.watch.membership('worker_admitted', w.url, 'worker answered its load poll: in the pool');
    this.#p.served.learn(this.#p.registry.workers, this.#p.log);
  }
}
