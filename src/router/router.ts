import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RouterConfig } from '../config/index.js';
import type { AdminDecisions, AdminState } from '../contract/index.js';
import { bindError } from '../errors/index.js';
import { createTrackedServer, listenOn, urlOf } from '../net/index.js';
import { loadChatTokenizer } from '../tokenizer/index.js';
import type { Logger } from './logging/logger.js';
import { RouterMetrics } from './metrics/index.js';
import { createPolicy, queueGate } from './policies/index.js';
import type { Policy, QueueGate } from './policies/index.js';
import { applyPrefixSource } from './prefix-source/apply-prefix-source.js';
import { PrefixState } from './prefix-source/prefix-state.js';
import { EndpointChoice, EppServer } from './epp/index.js';
import { Relay } from './proxy/relay.js';
import { AdminDocuments } from './server/admin-documents.js';
import { createHttpFront } from './server/build-front.js';
import { HeldRequests } from './server/generation.js';
import { drainServer } from './server/drain.js';
import { httpEdgeOptions } from './server/http-edge.js';
import { InflightRequests } from './server/inflight.js';
import { RequestCapture } from './state/capture/index.js';
import { DecisionRing } from './state/decisions/index.js';
import type { DecisionFilter } from './state/decisions/index.js';
import { KvEventIndex } from './state/kv-index/index.js';
import { loadMonitor } from './state/load-monitor/index.js';
import type { LoadSampler, LoadTable } from './state/load-monitor/index.js';
import { PrefixIndex } from './state/prefix-index/index.js';
import { EventWatcher } from './status/event-watcher.js';
import { FleetWatch } from './status/fleet-watch.js';
import { routerGauges } from './status/router-gauges.js';
import { startedMessage } from './status/started-message.js';
import { WorkerStatus } from './status/worker-status.js';
import { registryOptions } from './workers/registry-options.js';
import { ServedModel } from './workers/served-model.js';
import { WorkerRegistry } from './workers/worker-registry.js';
import { FleetMembership } from './membership/fleet-membership.js';

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
  /** --model-id or the workers' model, held the same way. */
  readonly served: ServedModel;
  readonly metrics: RouterMetrics;
  readonly table: LoadTable;
  readonly index: PrefixIndex;
  readonly registry: WorkerRegistry;
  /** Who is in the fleet and how that changes: the admin API, or a discovery mode (membership/). */
  readonly membership: FleetMembership;
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
  private readonly relay: Relay;
  private readonly watch: FleetWatch;
  private readonly documents: AdminDocuments;
  private readonly log: Logger;
  private readonly server: Server;
  private readonly sockets: Set<Socket>;
  private readonly inflightRequests = new InflightRequests();
  /** What both ways of stopping close once the HTTP side is done, in order. */
  private readonly closeables: ReadonlyArray<() => unknown>;
  /** The endpoint picker beside the HTTP front, with --epp (docs/endpoint-picker.md). */
  private readonly epp: EppServer | undefined;
  private eventTimer: NodeJS.Timeout | undefined;
  private address: AddressInfo | undefined;
  private ready = false;

  constructor(opts: RouterOptions) {
    const c = (this.config = opts.config);
    const log = (this.log = opts.log);
    const now = (): number => performance.now();
    const ready = (): boolean => this.ready;
    const gate = (this.gate = queueGate(c));
    const { table, push, sampler } = loadMonitor(c, gate, log, now);
    [this.table, this.sampler] = [table, sampler];
    const index = (this.index = new PrefixIndex({ maxBlocks: c.prefixIndexMaxBlocks }));
    const kvIndex = (this.kvIndex = new KvEventIndex(index, log, { maxBlocks: c.prefixIndexMaxBlocks }));
    let registry: WorkerRegistry | undefined;
    const prefix = (this.prefix = new PrefixState(index, kvIndex, table, (slot) => registry?.bySlotIndex(slot), c.blockSize));
    registry = this.registry = new WorkerRegistry(table, sampler, push, (w) => prefix.forget(w), log, registryOptions(c, now));
    const status = new WorkerStatus(table, registry, sampler, push, kvIndex);
    this.policy = createPolicy(c, gate);
    // Told when the workers name the model: the metrics relabel their series then.
    const served = (this.served = new ServedModel(c.modelId, (id) => metrics.setModelId(id)));
    const held = new HeldRequests();
    const gauges = {
      modelId: served.label,
      cacheAware: c.policy === 'cache_aware',
      epp: c.epp !== null,
      status,
      registry,
      table,
      gate,
      index,
      kvIndex,
      ...(c.admission === 'slo' ? { held: () => held.count } : {}),
    };
    const metrics = (this.metrics = new RouterMetrics(routerGauges(gauges)));
    const model = (): string => served.label;
    const relay = (this.relay = new Relay({
      table,
      index,
      metrics,
      log,
      timeoutMs: c.requestTimeoutSecs * 1000,
      model,
      policy: this.policy,
      prefix: prefix.lookup,
      random: opts.random ?? Math.random,
      tokenBlockSize: () => prefix.tokenBlockSize,
    }));
    const watch = (this.watch = new FleetWatch({ status, events: new EventWatcher(log, gate), table, gate, metrics, model }));
    const decisions = (this.decisions = new DecisionRing(c.decisionLogSize));
    const membership = (this.membership = new FleetMembership({
      config: c,
      registry,
      index,
      prefix,
      watch,
      metrics,
      served,
      log,
      started: () => this.address !== undefined || this.ready,
    }));
    const startedAt = Date.now();
    const url = (): string => (this.address ? this.url : '');
    const parts = { config: c, gate, metrics, index, decisions, served, table, policy: this.policy, capture: this.capture };
    const documents = (this.documents = new AdminDocuments(parts, {
      watch,
      prefix,
      version: opts.version,
      simulated: opts.simulated ?? false,
      startedAt,
      url,
      ready,
    }));
    const sources = { relay, log, documents, inflight: this.inflightRequests, prefix, startedAt, ready, membership, held };
    const { front, generation } = createHttpFront(parts, sources);
    ({ server: this.server, sockets: this.sockets } = createTrackedServer((req, res) => void front.dispatch(req, res), httpEdgeOptions(c)));
    this.epp =
      c.epp === null
        ? undefined
        : new EppServer({
            host: c.eppHost,
            port: c.epp,
            generation,
            relay,
            choice: new EndpointChoice(table, gate),
            inflight: this.inflightRequests,
            maxBodyBytes: c.maxBodyBytes,
            ready,
            log,
            serving: () => this.ready && table.view(performance.now()).workers.length > 0,
            picked: (seconds) => metrics.eppPick.observe([], seconds),
          });
    this.closeables = [() => push.close(), () => kvIndex.close(), () => sampler.stop(), () => registry.close()];
  }

  get url(): string {
    if (!this.address) throw new Error('router is not listening');
    return urlOf(this.address);
  }

  /** The endpoint picker's port once started, or null without --epp. */
  eppPort: number | null = null;

  /** The endpoint picker's gRPC address (`host:port`), or null without --epp. */
  get eppAddress(): string | null {
    if (this.eppPort === null) return null;
    const host = this.config.eppHost;
    return `${host.includes(':') ? `[${host}]` : host}:${this.eppPort}`;
  }

  get model(): string | null {
    return this.served.id;
  }

  /** What the prefix index is built from, decided at start (docs/routing.md §Prefix from engine events). */
  get prefixSource(): PrefixState['source'] {
    return this.prefix.source;
  }

  get inflight(): number {
    return this.inflightRequests.count;
  }

  /** Learn the workers, start sampling load, and listen. */
  async start(): Promise<string> {
    const c = this.config;
    // A tokenizer that cannot be read stops the start with one line (RCTL_E_TOKENIZER).
    const tokenizer = c.tokenizer !== null && c.prefixSource !== 'requests' ? loadChatTokenizer(c.tokenizer) : undefined;
    // The fleet discovery lists now is the fleet at start, in the pool at once as a configured one is; later changes join and leave.
    await this.membership.discovery?.start();
    await this.registry.introspectAll();
    const { registry, relay, kvIndex, log } = this;
    applyPrefixSource(this.prefix, { config: c, tokenizer, registry, relay, kvIndex, log });
    this.served.learn(registry.workers, log);
    this.sampler.start();
    // Events are looked for off the request path, twice a second (and on each /admin/state).
    this.eventTimer = setInterval(() => this.watch.look(performance.now()), 500);
    this.eventTimer.unref();
    this.address = await listenOn(this.server, c.port, c.host).catch((err: Error) => {
      throw bindError(c.host, c.port, err);
    });
    if (this.epp !== undefined) this.eppPort = await this.epp.start();
    this.ready = true;
    const workers = registry.workers.length;
    this.watch.started(
      startedMessage({ workers, url: this.url, policy: c.policy, gate: this.gate, prefixSource: this.prefix.source, epp: this.eppAddress }),
    );
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
    await this.stopTaking();
    const cut = await drainServer({
      server: this.server,
      sockets: this.sockets,
      drainMs: this.config.shutdownDrainSecs * 1000,
      pauseMs: Math.min(this.config.shutdownReadinessSecs, this.config.shutdownDrainSecs) * 1000,
      inflight: () => this.inflightRequests.count,
      idle: () => this.inflightRequests.idle(),
      skipPause: opts.skipPause,
      cutNow: opts.cutNow,
      afterCut: () => {
        for (const w of this.registry.workers) void w.pool.destroy().catch(() => undefined);
      },
      log: this.log,
    });
    // The picker's streams had the drain to end; what is left is cut with the HTTP side's.
    await this.epp?.stop(0);
    // Bounded, so the ceiling holds.
    await Promise.race([this.closeAll(), new Promise((r) => setTimeout(r, 1000).unref())]);
    return cut;
  }

  /** Stop at once: in-flight requests are cut. */
  async close(): Promise<void> {
    await this.stopTaking();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await Promise.all([closed, this.epp?.stop(0)]);
    await this.closeAll();
  }

  /** Both ways of stopping begin alike: not ready, no more event looks, no more fleet changes. */
  private async stopTaking(): Promise<void> {
    this.ready = false;
    clearInterval(this.eventTimer);
    await this.membership.discovery?.stop();
  }

  private async closeAll(): Promise<void> {
    await Promise.all(this.closeables.map((close) => close()));
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
