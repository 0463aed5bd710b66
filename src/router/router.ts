import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RouterConfig } from '../config/index.js';
import type { AdminDecisions, AdminState } from '../contract/index.js';
import { bindError } from '../errors/index.js';
import { createTrackedServer } from '../net/index.js';
import { loadChatTokenizer } from '../tokenizer/index.js';
import type { ChatTokenizer } from '../tokenizer/index.js';
import type { Logger } from './logging/logger.js';
import { RouterMetrics, UNKNOWN_MODEL } from './metrics/index.js';
import { createPolicy, queueGate } from './policies/index.js';
import type { Policy, QueueGate } from './policies/index.js';
import { applyPrefixSource } from './prefix-source/apply-prefix-source.js';
import { PrefixState } from './prefix-source/prefix-state.js';
import { Relay } from './proxy/relay.js';
import { AdminDocuments } from './server/admin-documents.js';
import type { Membership } from './server/admin-workers.js';
import { createHttpFront } from './server/build-front.js';
import { drainServer } from './server/drain.js';
import { httpEdgeOptions } from './server/http-edge.js';
import { InflightRequests } from './server/inflight.js';
import { RequestCapture } from './state/capture/index.js';
import { DecisionRing } from './state/decisions/index.js';
import type { DecisionFilter } from './state/decisions/index.js';
import { KvEventIndex } from './state/kv-index/index.js';
import { loadMonitor } from './state/load-monitor/index.js';
import type { LoadPush, LoadSampler, LoadTable } from './state/load-monitor/index.js';
import { PrefixIndex } from './state/prefix-index/index.js';
import { EventWatcher } from './status/event-watcher.js';
import { FleetWatch } from './status/fleet-watch.js';
import { routerGauges } from './status/router-gauges.js';
import { startedMessage } from './status/started-message.js';
import { WorkerStatus } from './status/worker-status.js';
import { discoverModel } from './workers/discover-model.js';
import { registryOptions } from './workers/registry-options.js';
import { WorkerRegistry } from './workers/worker-registry.js';
import type { Discovery, DiscoveryMode } from './discovery/discovery.js';
import { discoveryFor } from './discovery/discovery-for.js';
import type { Worker } from './upstream/worker.js';

export interface RouterOptions {
  config: RouterConfig;
  log: Logger;
  version: string;
  /** The fleet behind this router is the embedded simulator. */
  simulated?: boolean;
  /** Injected for deterministic tests; defaults to Math.random. */
  random?: () => number;
}

/**
 * The router: composes the load table and sampler, the prefix index, the workers, the
 * policy over the one queue gate, and the relay behind the HTTP front (node:http), and
 * runs their lifecycle (start, drain, close). The request path is server/generation.ts,
 * the routes server/routes.ts, the admin documents server/admin-documents.ts, the
 * prefix source prefix-source/ (docs/architecture.md §Inside router/). One process, one model.
 */
export class Router {
  readonly config: RouterConfig;
  /** --worker-queue-limit and --saturation-queue-floor, built once; every reader holds this one. */
  readonly gate: QueueGate;
  readonly metrics: RouterMetrics;
  readonly table: LoadTable;
  readonly index: PrefixIndex;
  readonly registry: WorkerRegistry;
  readonly policy: Policy;
  /** The prefix index fed by the engines' KV events; used when `prefixSource` is 'events'. */
  readonly kvIndex: KvEventIndex;
  /** The last --decision-log-size routing decisions (docs/decisions.md). */
  readonly decisions: DecisionRing;
  /** Completed requests for GET /admin/capture, while someone listens. */
  readonly capture = new RequestCapture();
  /** What the prefix index is built from and how requests are keyed: decided at start. */
  private readonly prefix: PrefixState;
  private readonly sampler: LoadSampler;
  private readonly loadPush: LoadPush;
  private readonly relay: Relay;
  private readonly watch: FleetWatch;
  private readonly documents: AdminDocuments;
  private readonly log: Logger;
  private readonly server: Server;
  private readonly sockets: Set<Socket>;
  private readonly inflightRequests = new InflightRequests();
  private eventTimer: NodeJS.Timeout | undefined;
  private tokenizer: ChatTokenizer | undefined;
  private modelId: string | null;
  private address: AddressInfo | undefined;
  private ready = false;

  constructor(opts: RouterOptions) {
    const c = opts.config;
    const log = opts.log;
    const now = (): number => performance.now();
    const ready = (): boolean => this.ready;
    this.config = c;
    this.log = log;
    this.modelId = c.modelId;
    const gate = (this.gate = queueGate(c));
    const { table, push, sampler } = loadMonitor(c, gate, log, now);
    [this.table, this.loadPush, this.sampler] = [table, push, sampler];
    const index = (this.index = new PrefixIndex({ maxBlocks: c.prefixIndexMaxBlocks }));
    const kvIndex = (this.kvIndex = new KvEventIndex(index, log, { maxBlocks: c.prefixIndexMaxBlocks }));
    const prefix = (this.prefix = new PrefixState(index, kvIndex, table, (slot) => this.registry.bySlotIndex(slot), c.blockSize));
    const registry = (this.registry = new WorkerRegistry(table, sampler, push, (w) => prefix.forget(w), log, registryOptions(c, now)));
    // Owners in the digest are named by URL, so replicas with the same workers compare.
    for (const url of c.workerUrls) index.setOwnerTag(registry.add(url).slot, url);
    this.discovery = discoveryFor(
      c,
      { urls: () => registry.workers.map((w) => w.url), add: (u) => this.addWorker(u), remove: (u) => void this.removeWorker(u) },
      log,
    );
    const status = new WorkerStatus(table, registry, sampler, push, kvIndex);
    this.policy = createPolicy(c, gate);
    const modelId = this.modelId ?? UNKNOWN_MODEL;
    const cacheAware = c.policy === 'cache_aware';
    const metrics = (this.metrics = new RouterMetrics(
      routerGauges({ modelId, cacheAware, status, registry, table, gate, index, kvIndex }),
    ));
    const model = (): string => this.modelId ?? UNKNOWN_MODEL;
    this.relay = new Relay({
      table,
      index,
      metrics,
      log,
      timeoutMs: c.requestTimeoutSecs * 1000,
      model,
      policy: this.policy,
      prefix: prefix.lookup,
      random: opts.random ?? Math.random,
    });
    const watch = (this.watch = new FleetWatch({ status, events: new EventWatcher(log, gate), table, gate, metrics, model }));
    this.decisions = new DecisionRing(c.decisionLogSize);
    const startedAt = Date.now();
    const url = (): string => (this.address ? this.url : '');
    const version = opts.version;
    const documents = (this.documents = new AdminDocuments(this, {
      watch,
      prefix,
      version,
      simulated: opts.simulated ?? false,
      startedAt,
      url,
      ready,
    }));
    const membership: Membership = {
      owner: () => this.membershipOwner,
      tokenConfigured: c.adminToken !== null && c.adminToken !== '',
      add: (u) => this.addWorker(u),
      remove: (u) => this.removeWorker(u),
    };
    registry.onAdmitted = (w) => this.admitted(w);
    // An engine that stopped answering and came back has most likely restarted with an empty
    // cache. The events index learns that from its sequences starting again; the requests
    // index has only this to go by, so it forgets what it said the worker held.
    registry.onReturned = (w) => {
      if (prefix.source !== 'requests') return;
      index.forgetWorker(w.slot);
      log.info('worker is back after unanswered load polls: the prefixes routed to it are forgotten (it may have restarted)', {
        worker: w.url,
      });
    };
    const front = createHttpFront(this, {
      relay: this.relay,
      log,
      documents,
      inflight: this.inflightRequests,
      prefix,
      startedAt,
      ready,
      membership,
    });
    ({ server: this.server, sockets: this.sockets } = createTrackedServer((req, res) => void front.dispatch(req, res), httpEdgeOptions(c)));
  }

  get url(): string {
    if (!this.address) throw new Error('router is not listening');
    return `http://${this.address.family === 'IPv6' ? `[${this.address.address}]` : this.address.address}:${this.address.port}`;
  }

  get model(): string | null {
    return this.modelId;
  }

  /** What the prefix index is built from, decided at start (docs/routing.md §Prefix from engine events). */
  get prefixSource(): PrefixState['source'] {
    return this.prefix.source;
  }

  /** Tokens per block of the prefix index's keys: the workers' advertised size under events, else --block-size. */
  get keyBlockSize(): number {
    const keying = this.prefix.keying;
    return keying.by === 'none' ? this.config.blockSize : keying.blockSize;
  }

  get inflight(): number {
    return this.inflightRequests.count;
  }

  /** Who changes the fleet at runtime: `static` (the configured list and /admin/workers) or a discovery mode. */
  get membershipOwner(): 'static' | DiscoveryMode {
    return this.discovery?.mode ?? 'static';
  }

  /** --dns-discovery or --service-discovery: the fleet as DNS or the Kubernetes API lists it. */
  private readonly discovery: Discovery | undefined;

  /**
   * A worker joins the running router (docs/http-edge.md §Membership): introspected,
   * sampled and subscribed to its push channels as at start, and in the pool from its
   * first load answer. `exists` when its URL is in the fleet already.
   */
  addWorker(url: string): 'added' | 'exists' {
    if (this.registry.byUrl(url) !== undefined) return 'exists';
    // Before start() has introspected the fleet, a worker is part of the fleet at start.
    const atStart = this.address === undefined && !this.ready;
    const w = atStart ? this.registry.add(url) : this.registry.join(url);
    this.index.setOwnerTag(w.slot, url);
    this.watch.membership('worker_added', url, atStart ? 'worker found at start' : 'worker added: in the pool once it answers a load poll');
    return 'added';
  }

  /**
   * A worker leaves: out of the pool at once, so it takes no new request; its in-flight
   * requests finish, within --shutdown-drain-secs, and then its index entries, pools,
   * subscriptions and metric series go. `gone` settles then. Undefined when no such worker.
   */
  removeWorker(url: string): { inflight: number; gone: Promise<void> } | undefined {
    const w = this.registry.byUrl(url);
    if (w === undefined) return undefined;
    const inflight = w.inflight;
    const gone = this.registry.retire(w, this.config.shutdownDrainSecs * 1000).then(() => {
      this.metrics.forgetWorker(url);
      this.watch.membership(
        'worker_removed',
        url,
        `worker removed: out of the fleet, ${inflight} request${inflight === 1 ? '' : 's'} were in flight`,
      );
    });
    return { inflight, gone };
  }

  /** A worker that joined at runtime answered its first load poll: it is in the pool, and may tell the model. */
  private admitted(w: Worker): void {
    this.watch.membership('worker_admitted', w.url, 'worker answered its load poll: in the pool');
    if (this.modelId === null) {
      this.modelId = discoverModel(this.registry.workers, this.log);
      if (this.modelId !== null) this.metrics.setModelId(this.modelId);
    }
  }

  /** Learn the workers, start sampling load, and listen. */
  async start(): Promise<string> {
    const c = this.config;
    // A tokenizer that cannot be read stops the start with one line (RCTL_E_TOKENIZER).
    if (c.tokenizer !== null && c.prefixSource !== 'requests') this.tokenizer = loadChatTokenizer(c.tokenizer);
    // The fleet discovery lists now is the fleet at start, in the pool at once as a configured one is; later changes join and leave.
    await this.discovery?.start();
    await this.registry.introspectAll();
    const { registry, relay, kvIndex, log, tokenizer } = this;
    applyPrefixSource(this.prefix, { config: c, tokenizer, registry, relay, kvIndex, log });
    if (this.modelId === null) this.modelId = discoverModel(registry.workers, log);
    if (this.modelId !== null) this.metrics.setModelId(this.modelId);
    this.sampler.start();
    // Events are looked for off the request path, twice a second (and on each /admin/state).
    this.eventTimer = setInterval(() => this.watch.look(performance.now()), 500);
    this.eventTimer.unref();
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(bindError(c.host, c.port, err));
      this.server.once('error', onError);
      this.server.listen(c.port, c.host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    this.address = this.server.address() as AddressInfo;
    this.ready = true;
    const workers = registry.workers.length;
    this.watch.started(startedMessage({ workers, url: this.url, policy: c.policy, gate: this.gate, prefixSource: this.prefix.source }));
    return this.url;
  }

  /**
   * Graceful shutdown with a ceiling of --shutdown-drain-secs (docs/http-edge.md,
   * "Shutdown and signals"): /readyz and new generation requests answer 503 at once,
   * in-flight requests go on through the readiness pause (ended early by `skipPause`),
   * and whatever is left at the deadline, or when `cutNow` resolves, is cut.
   * Resolves to the number of requests cut (0: a clean drain).
   */
  async shutdown(opts: { skipPause?: Promise<void>; cutNow?: Promise<void> } = {}): Promise<number> {
    this.ready = false;
    clearInterval(this.eventTimer);
    await this.discovery?.stop();
    const cut = await drainServer({
      server: this.server,
      sockets: this.sockets,
      drainMs: this.config.shutdownDrainSecs * 1000,
      pauseMs: Math.min(this.config.shutdownReadinessSecs, this.config.shutdownDrainSecs) * 1000,
      inflight: () => this.inflightRequests.count,
      idle: () => this.inflightRequests.idle(),
      skipPause: opts.skipPause,
      cutNow: opts.cutNow,
      log: this.log,
    });
    // After a cut, the upstream requests are being aborted: drop the pools rather than wait
    // for them. Bounded either way, so the ceiling holds.
    if (cut > 0) for (const w of this.registry.workers) void w.pool.destroy().catch(() => undefined);
    // Cut requests unwind on the next turns of the event loop (their upstream aborts
    // settle); let them, within a bound, so that a caller sees nothing in flight.
    if (this.inflightRequests.count > 0) {
      await Promise.race([this.inflightRequests.idle(), new Promise((r) => setTimeout(r, 500).unref())]);
    }
    this.loadPush.close();
    this.kvIndex.close();
    await Promise.race([Promise.all([this.sampler.stop(), this.registry.close()]), new Promise((r) => setTimeout(r, 1000).unref())]);
    return cut;
  }

  /** Stop at once: in-flight requests are cut. */
  async close(): Promise<void> {
    this.ready = false;
    clearInterval(this.eventTimer);
    await this.discovery?.stop();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
    this.loadPush.close();
    this.kvIndex.close();
    await this.sampler.stop();
    await this.registry.close();
  }

  /** GET /admin/state (docs/metrics-and-admin.md). */
  state(): AdminState {
    return this.documents.state();
  }

  /** GET /admin/decisions (docs/decisions.md §Admin decisions). */
  decisionsDoc(filter: DecisionFilter = {}): AdminDecisions {
    return this.documents.decisions(filter);
  }
}
