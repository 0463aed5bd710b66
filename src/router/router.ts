import { createTrackedServer } from '../net/index.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RouterConfig } from '../config/index.js';
import { bindError } from '../errors/index.js';
import { PROMETHEUS_CONTENT_TYPE } from '../prometheus/index.js';
import type { AdminState, AdminWorker } from '../contract/index.js';
import type { Logger } from './logging/logger.js';
import { DECISIONS, RouterMetrics, UNKNOWN_MODEL } from './metrics/index.js';
import { SelectionBooker } from './metrics/selection-booker.js';
import { createPolicy } from './policies/index.js';
import type { Policy, PrefixMatch } from './policies/index.js';
import { Dispatcher } from './proxy/dispatcher.js';
import { parseInferenceRequest } from './request/inference-request.js';
import type { InferenceRequest, InferenceRoute } from './request/inference-request.js';
import { requireJsonContentType } from './request/content-type.js';
import { readRequestBody } from './request/read-body.js';
import { ApiError, ApiErrors, sendApiError } from './server/api-error.js';
import { authorizeAdmin, streamState, tokenDigest } from './server/admin-api.js';
import { drainServer } from './server/drain.js';
import { ANY_ALLOW, GET_ALLOW, POST_ALLOW, answerOptions, httpEdgeOptions } from './server/http-edge.js';
import { LoadSampler, LoadTable } from './state/load_monitor/index.js';
import { PrefixIndex } from './state/prefix_index/index.js';
import { WorkerRegistry } from './workers/worker-registry.js';

export interface RouterOptions {
  config: RouterConfig;
  log: Logger;
  version: string;
  /** The fleet behind this router is the embedded simulator. */
  simulated?: boolean;
  /** Injected for deterministic tests; defaults to Math.random. */
  random?: () => number;
}

const GENERATION_ROUTES: Record<string, { route: InferenceRoute; path: string }> = {
  '/v1/chat/completions': { route: 'chat', path: '/v1/chat/completions' },
  '/v1/completions': { route: 'completions', path: '/v1/completions' },
  '/generate': { route: 'generate', path: '/generate' },
};

/**
 * The router: an HTTP front (node:http), the selection ladder over a prefix index
 * and a load table, and a streaming proxy to the workers. One process, one model.
 */
export class Router {
  readonly config: RouterConfig;
  readonly metrics: RouterMetrics;
  readonly table: LoadTable;
  readonly index: PrefixIndex;
  readonly registry: WorkerRegistry;
  readonly policy: Policy;
  private readonly sampler: LoadSampler;
  private readonly log: Logger;
  private readonly version: string;
  private readonly simulated: boolean;
  private readonly random: () => number;
  private readonly server: Server;
  private readonly sockets: Set<Socket>;
  private readonly matchBuffer: { slots: Int32Array; depths: Int32Array };
  private readonly startedAt = Date.now();
  private readonly adminTokenDigest: Buffer | undefined;
  private readonly booker: SelectionBooker;
  private readonly dispatcher: Dispatcher;
  private modelId: string | null;
  private address: AddressInfo | undefined;
  private ready = false;
  private inflightTotal = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(opts: RouterOptions) {
    const c = opts.config;
    this.config = c;
    this.log = opts.log;
    this.version = opts.version;
    this.simulated = opts.simulated ?? false;
    this.random = opts.random ?? Math.random;
    this.modelId = c.modelId;
    this.table = new LoadTable(c.loadFreshnessMs);
    this.table.setGate(c.workerQueueLimit, c.saturationQueueFloor);
    this.index = new PrefixIndex({ maxBlocks: c.prefixIndexMaxBlocks });
    this.matchBuffer = this.index.newMatchBuffer();
    this.sampler = new LoadSampler(this.table, {
      intervalMs: c.loadPollIntervalMs,
      timeoutMs: c.loadTimeoutMs,
      now: () => performance.now(),
      onStatus: (w, s) =>
        s.ok ? this.log.info('load sampling ok', { worker: w.url, source: s.source }) : this.log.warn('no load sample', { worker: w.url, reason: s.reason }),
    });
    this.registry = new WorkerRegistry(this.table, this.sampler, this.index, this.log, {
      cbThreshold: c.cbThreshold > 0 ? c.cbThreshold : null,
      cbCoolDownMs: c.cbCoolDownSecs * 1000,
      connections: 1024,
      introspectTimeoutMs: 2000,
      connectTimeoutMs: Math.min(10_000, c.requestTimeoutSecs * 1000),
      now: () => performance.now(),
    });
    for (const url of c.workerUrls) this.registry.add(url);
    this.policy = createPolicy(c);
    this.adminTokenDigest = c.adminToken ? tokenDigest(c.adminToken) : undefined;
    this.metrics = new RouterMetrics({
      modelId: this.modelId ?? UNKNOWN_MODEL,
      cacheAware: c.policy === 'cache_aware',
      workers: () => {
        const now = performance.now();
        const view = this.table.view(now);
        return this.registry.workers.map((w) => {
          const load = view.basic(w);
          const age = this.table.sampleAge(w, now);
          return {
            url: w.url,
            inflight: w.inflight,
            healthy: this.registry.isHealthy(w, now),
            breakerState: w.breaker.state === 'closed' ? 0 : w.breaker.state === 'open' ? 1 : 2,
            waiting: load ? load.waiting : null,
            sampleAgeSeconds: age === undefined ? null : age / 1000,
            loadPollFailures: this.sampler.stats(w).failures,
          };
        });
      },
      queueGateInert: () => this.gateInert(performance.now()),
      prefixIndexBlocks: () => this.index.size,
      prefixIndexEvictions: () => this.index.evictions,
    });
    const model = (): string => this.modelId ?? UNKNOWN_MODEL;
    this.booker = new SelectionBooker(this.metrics, this.log, this.policy.name, model, c.workerQueueLimit, c.saturationQueueFloor);
    this.dispatcher = new Dispatcher({ table: this.table, index: this.index, metrics: this.metrics, log: this.log, timeoutMs: c.requestTimeoutSecs * 1000, model, policy: this.policy, prefix: (parsed) => this.prefixSignal(parsed), random: this.random });
    ({ server: this.server, sockets: this.sockets } = createTrackedServer((req, res) => void this.dispatch(req, res), httpEdgeOptions(c)));
  }

  get url(): string {
    if (!this.address) throw new Error('router is not listening');
    return `http://${this.address.family === 'IPv6' ? `[${this.address.address}]` : this.address.address}:${this.address.port}`;
  }

  get model(): string | null {
    return this.modelId;
  }

  /** Learn the workers, start sampling load, and listen. */
  async start(): Promise<string> {
    await this.registry.introspectAll();
    if (this.modelId === null) this.modelId = this.discoverModel();
    if (this.modelId !== null) this.metrics.setModelId(this.modelId);
    this.sampler.start();
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(bindError(this.config.host, this.config.port, err));
      this.server.once('error', onError);
      this.server.listen(this.config.port, this.config.host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    this.address = this.server.address() as AddressInfo;
    this.ready = true;
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
    const cut = await drainServer({
      server: this.server,
      sockets: this.sockets,
      drainMs: this.config.shutdownDrainSecs * 1000,
      inflight: () => this.inflightTotal,
      idle: () => new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
      skipPause: opts.skipPause,
      cutNow: opts.cutNow,
      log: this.log,
    });
    // After a cut, the upstream requests are being aborted: drop the pools rather than wait
    // for them. Bounded either way, so the ceiling holds.
    if (cut > 0) for (const w of this.registry.workers) void w.pool.destroy().catch(() => undefined);
    // Cut requests unwind on the next turns of the event loop (their upstream aborts
    // settle); let them, within a bound, so that a caller sees nothing in flight.
    if (this.inflightTotal > 0) {
      await Promise.race([new Promise<void>((resolve) => this.idleWaiters.push(resolve)), new Promise((r) => setTimeout(r, 500).unref())]);
    }
    await Promise.race([Promise.all([this.sampler.stop(), this.registry.close()]), new Promise((r) => setTimeout(r, 1000).unref())]);
    return cut;
  }

  /** Stop at once: in-flight requests are cut. */
  async close(): Promise<void> {
    this.ready = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
    await this.sampler.stop();
    await this.registry.close();
  }

  get inflight(): number {
    return this.inflightTotal;
  }

  state(): AdminState {
    const now = performance.now();
    const view = this.table.view(now);
    const limit = this.config.workerQueueLimit;
    const workers: AdminWorker[] = this.registry.workers.map((w) => {
      const fresh = view.basic(w);
      const age = this.table.sampleAge(w, now);
      const polls = this.sampler.stats(w);
      return {
        url: w.url,
        healthy: this.registry.isHealthy(w, now),
        breaker: w.breaker.state,
        waiting: fresh ? fresh.waiting : null,
        running: fresh ? fresh.running : null,
        sample_age_ms: age === undefined ? null : Math.round(age),
        fresh: fresh !== undefined,
        gated: limit !== null && fresh !== undefined && fresh.waiting >= limit,
        inflight: w.inflight,
        requests_total: w.requestsTotal,
        gate_rejections_total: w.gateRejectionsTotal,
        dp_size: w.info.dpSize ?? null,
        load_poll_failures_total: polls.failuresTotal,
        load_poll_failures: { ...polls.failures },
        last_poll_error: polls.lastError ? { reason: polls.lastError.reason, message: polls.lastError.message, at_ms: polls.lastError.atMs } : null,
        load_poll_unanswered: polls.unanswered,
        load_unreachable: this.registry.isUnreachable(w),
      };
    });
    const m = this.metrics;
    const model = this.modelId ?? UNKNOWN_MODEL;
    const decisions = Object.fromEntries(DECISIONS.map((d) => [d, m.cacheDecisions.get([model, d])])) as AdminState['decisions'];
    const policyDecisions: Record<string, number> = {};
    m.policyDecisions.forEach((labels, v) => (policyDecisions[labels[1]!] = v));
    return {
      router: {
        version: this.version,
        policy: this.config.policy,
        model_id: this.modelId,
        worker_queue_limit: limit,
        saturation_queue_floor: this.config.saturationQueueFloor,
        min_load_choices: this.config.minLoadChoices,
        uptime_s: Math.round((Date.now() - this.startedAt) / 100) / 10,
        simulated: this.simulated,
        url: this.address ? this.url : '',
        ready: this.ready,
        load_freshness_ms: this.config.loadFreshnessMs,
        block_size: this.config.blockSize,
      },
      workers,
      decisions,
      selection_failures_total: m.selectionFailures.sum(),
      diverted_overlap_blocks: m.divertedOverlap.snapshot([model]),
      alerts: { all_queued: this.fleetAllQueued(now), gate_inert: this.gateInert(now) },
      requests_total: this.registry.workers.reduce((a, w) => a + w.requestsTotal, 0),
      gate_rejections_total: m.gateRejected.sum(),
      partial_diversions_total: m.partialDiversions.sum(),
      policy_decisions: policyDecisions,
      timestamp_ms: Date.now(),
    };
  }

  private fleetAllQueued(now: number): boolean {
    const pool = this.table.view(now);
    return this.config.workerQueueLimit !== null && pool.workers.length > 0 && pool.queued === pool.workers.length;
  }

  private gateInert(now: number): boolean {
    const pool = this.table.view(now);
    return this.config.workerQueueLimit !== null && pool.workers.length > 0 && pool.sampled === 0;
  }

  private discoverModel(): string | null {
    const seen = new Map<string, number>();
    for (const w of this.registry.workers) for (const m of w.info.models) seen.set(m, (seen.get(m) ?? 0) + 1);
    if (seen.size === 0) {
      this.log.warn('no worker reported a model; requests naming any model are accepted until --model-id is set');
      return null;
    }
    const [model] = [...seen.entries()].sort((a, b) => b[1] - a[1])[0]!;
    if (seen.size > 1) this.log.warn('workers report different models; serving the most common', { model, models: [...seen.keys()] });
    return model;
  }

  // ---------------------------------------------------------------- HTTP
  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const method = req.method ?? 'GET';
    const gen = Object.hasOwn(GENERATION_ROUTES, path) ? GENERATION_ROUTES[path] : undefined;
    // Draining: every answer closes its connection, so the client's next one goes elsewhere.
    if (!this.ready) res.setHeader('connection', 'close');
    try {
      if (gen) {
        this.metrics.requests.inc([path, method]);
        if (method === 'OPTIONS') answerOptions(res, POST_ALLOW);
        else {
          if (method !== 'POST') throw ApiErrors.methodNotAllowed(POST_ALLOW);
          requireJsonContentType(req.headers['content-type']);
          await this.handleGeneration(gen.route, gen.path, req, res);
        }
        this.metrics.responses.inc([path, method, String(res.statusCode)]);
        return;
      }
      if (!Object.hasOwn(GET_ROUTES, path)) {
        if (path === '*' && method === 'OPTIONS') return answerOptions(res, ANY_ALLOW);
        throw ApiErrors.notFound();
      }
      if (method === 'OPTIONS') return answerOptions(res, GET_ALLOW);
      // HEAD is GET without the body: node:http leaves the body out by itself.
      if (method !== 'GET' && method !== 'HEAD') throw ApiErrors.methodNotAllowed(GET_ALLOW);
      switch (path) {
        case '/v1/models':
          return this.sendJson(res, 200, {
            object: 'list',
            data: this.modelId ? [{ id: this.modelId, object: 'model', created: Math.floor(this.startedAt / 1000), owned_by: 'routerctl' }] : [],
          });
        case '/healthz':
          return this.sendJson(res, 200, { status: 'ok' });
        case '/readyz': {
          const pool = this.table.view(performance.now()).workers.length;
          if (this.ready && pool > 0) return this.sendJson(res, 200, { status: 'ready', workers: pool });
          return this.sendJson(res, 503, { status: this.ready ? 'no_healthy_workers' : 'draining', workers: pool });
        }
        case '/metrics': {
          const body = this.metrics.render();
          res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) });
          res.end(body);
          return;
        }
        case '/admin/state':
          authorizeAdmin(req, this.adminTokenDigest);
          return this.sendJson(res, 200, this.state());
        case '/admin/stream':
          authorizeAdmin(req, this.adminTokenDigest);
          return streamState(req, res, () => this.state());
        default:
          throw ApiErrors.notFound();
      }
    } catch (err) {
      const apiErr = err instanceof ApiError ? err : ApiErrors.internal();
      if (!(err instanceof ApiError)) this.log.error('unexpected error handling a request', { path, error: (err as Error)?.message });
      sendApiError(res, apiErr);
      if (gen) this.metrics.responses.inc([path, method, String(apiErr.status)]);
      // Refused before its body was read (413, 415, shutting down): that body will not be read.
      if (apiErr.headers.connection === 'close' && !req.complete) res.once('finish', () => req.destroy());
    }
  }

  private sendJson(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  // ---------------------------------------------------------------- generation
  private async handleGeneration(route: InferenceRoute, upstreamPath: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    if (!this.ready) throw ApiErrors.shuttingDown();
    const body = await readRequestBody(req, this.config.maxBodyBytes);
    const parsed = parseInferenceRequest(route, body, this.config.blockSize);
    if (parsed.model !== undefined && this.modelId !== null && parsed.model !== this.modelId) throw ApiErrors.modelNotFound(parsed.model);

    const view = this.table.view(performance.now());
    if (view.workers.length === 0) throw ApiErrors.noHealthyWorkers();
    // The one booked selection; a retry selects again inside the dispatcher, unbooked.
    const outcome = this.dispatcher.select(parsed, view);
    this.booker.book(outcome, view.workers.length);
    if (!outcome.ok) throw ApiErrors.selectionFailed();

    this.inflightTotal++;
    try {
      await this.dispatcher.dispatch(outcome, parsed, body, upstreamPath, req, res, started);
    } finally {
      if (--this.inflightTotal === 0 && this.idleWaiters.length > 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }

  private prefixSignal(parsed: InferenceRequest) {
    const hashes = parsed.prefixHashes;
    if (hashes.length === 0) return { queryBlocks: 0, matches: [] as PrefixMatch[] };
    const n = this.index.match(hashes, this.matchBuffer);
    const matches: PrefixMatch[] = [];
    for (let i = 0; i < n; i++) {
      const w = this.registry.bySlotIndex(this.matchBuffer.slots[i]!);
      if (w && this.table.isInPool(w)) matches.push({ worker: w, blocks: this.matchBuffer.depths[i]! });
    }
    return { queryBlocks: hashes.length, matches };
  }

}

const GET_ROUTES = { '/v1/models': 1, '/healthz': 1, '/readyz': 1, '/metrics': 1, '/admin/state': 1, '/admin/stream': 1 };
