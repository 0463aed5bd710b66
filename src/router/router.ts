import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { RouterConfig } from '../config/index.js';
import { bindError } from '../errors/index.js';
import { PROMETHEUS_CONTENT_TYPE } from '../prometheus/index.js';
import type { AdminState, AdminWorker } from './admin-state.js';
import type { Logger } from './logging/logger.js';
import { DECISIONS, RouterMetrics, outcomeFromStatus } from './metrics/index.js';
import { createPolicy } from './policies/index.js';
import type { Policy, PrefixMatch, SelectionOutcome, SelectionSuccess } from './policies/index.js';
import { QUEUE_GATE_INERT_MESSAGE, SATURATION_PIN_LOG_MESSAGE } from './policies/cache-aware/index.js';
import { forward } from './proxy/forward.js';
import type { ForwardOutcome } from './proxy/forward.js';
import { parseInferenceRequest } from './request/inference-request.js';
import type { InferenceRequest, InferenceRoute } from './request/inference-request.js';
import { readRequestBody } from './request/read-body.js';
import { ApiError, ApiErrors, sendApiError } from './server/api-error.js';
import { LoadSampler, LoadTable } from './state/load_monitor/index.js';
import { PrefixIndex } from './state/prefix_index/index.js';
import type { Worker } from './workers/worker.js';
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
  private readonly sockets = new Set<Socket>();
  private readonly matchBuffer: { slots: Int32Array; depths: Int32Array };
  private readonly startedAt = Date.now();
  private readonly adminTokenDigest: Buffer | undefined;
  private modelId: string | null;
  private address: AddressInfo | undefined;
  private ready = false;
  private inflightTotal = 0;
  private retryCursor = 0;
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
      cbThreshold: c.cbThreshold,
      cbCoolDownMs: c.cbCoolDownSecs * 1000,
      connections: 1024,
      introspectTimeoutMs: 2000,
      now: () => performance.now(),
    });
    for (const url of c.workerUrls) this.registry.add(url);
    this.policy = createPolicy(c);
    this.adminTokenDigest = c.adminToken ? digest(c.adminToken) : undefined;
    this.metrics = new RouterMetrics({
      modelId: this.modelId ?? 'unknown',
      workers: () => {
        const now = performance.now();
        const view = this.table.view(now);
        return this.registry.workers.map((w) => {
          const load = view.basic(w);
          const age = this.table.sampleAge(w, now);
          return {
            url: w.url,
            inflight: w.inflight,
            healthy: w.breaker.wouldAllow(now),
            breakerState: w.breaker.state === 'closed' ? 0 : w.breaker.state === 'open' ? 1 : 2,
            waiting: load ? load.waiting : null,
            sampleAgeSeconds: age === undefined ? null : age / 1000,
          };
        });
      },
      queueGateInert: () => this.gateInert(performance.now()),
      prefixIndexBlocks: () => this.index.size,
      prefixIndexEvictions: () => this.index.evictions,
    });
    this.server = createServer((req, res) => void this.dispatch(req, res));
    this.server.keepAliveTimeout = 65_000;
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy();
    });
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
   * Graceful shutdown: /readyz turns 503 at once, then a pause of --shutdown-drain-secs
   * (cut short by `skipPause`) for load balancers to notice, then no new connections,
   * then in-flight requests finish.
   */
  async shutdown(opts: { pause?: Promise<void> } = {}): Promise<void> {
    this.ready = false;
    const pauseMs = this.config.shutdownDrainSecs * 1000;
    if (pauseMs > 0) {
      this.log.info('draining: /readyz now answers 503', { pause_s: this.config.shutdownDrainSecs, inflight: this.inflightTotal });
      await Promise.race([new Promise((r) => setTimeout(r, pauseMs)), opts.pause ?? new Promise(() => {})]);
    }
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
      if (this.inflightTotal === 0) for (const s of this.sockets) s.destroy();
      else this.idleWaiters.push(() => {
        for (const s of this.sockets) s.destroy();
      });
    });
    await this.sampler.stop();
    await this.registry.close();
  }

  /** Stop at once: in-flight requests are cut. */
  async close(): Promise<void> {
    this.ready = false;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
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
      return {
        url: w.url,
        healthy: w.breaker.wouldAllow(now),
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
      };
    });
    const m = this.metrics;
    const model = this.modelId ?? 'unknown';
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
    try {
      const gen = GENERATION_ROUTES[path];
      if (gen) {
        this.metrics.requests.inc([path, method]);
        if (method !== 'POST') throw ApiErrors.methodNotAllowed('POST');
        await this.handleGeneration(gen.route, gen.path, req, res);
        this.metrics.responses.inc([path, method, String(res.statusCode)]);
        return;
      }
      if (method !== 'GET') throw path in GET_ROUTES ? ApiErrors.methodNotAllowed('GET') : ApiErrors.notFound();
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
          this.authorize(req);
          return this.sendJson(res, 200, this.state());
        case '/admin/stream':
          this.authorize(req);
          return this.stream(req, res);
        default:
          throw ApiErrors.notFound();
      }
    } catch (err) {
      const apiErr = err instanceof ApiError ? err : ApiErrors.internal();
      if (!(err instanceof ApiError)) this.log.error('unexpected error handling a request', { path, error: (err as Error)?.message });
      sendApiError(res, apiErr);
      if (GENERATION_ROUTES[path]) this.metrics.responses.inc([path, method, String(apiErr.status)]);
      if (apiErr.status === 413) res.once('finish', () => req.destroy());
    }
  }

  private sendJson(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  /** Bearer token for /admin/*, compared in constant time (digests make lengths equal). */
  private authorize(req: IncomingMessage): void {
    if (!this.adminTokenDigest) return;
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!timingSafeEqual(digest(token), this.adminTokenDigest)) throw ApiErrors.unauthorized();
  }

  /** SSE: one state object per event, every interval_ms (default 1000, at least 100). */
  private stream(req: IncomingMessage, res: ServerResponse): void {
    const q = new URL(req.url ?? '/', 'http://router').searchParams.get('interval_ms');
    const interval = Math.max(100, Number.isFinite(Number(q)) && q !== null ? Number(q) : 1000);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (): void => {
      res.write(`event: state\ndata: ${JSON.stringify(this.state())}\n\n`);
    };
    send();
    const timer = setInterval(send, interval);
    res.once('close', () => clearInterval(timer));
  }

  // ---------------------------------------------------------------- generation
  private async handleGeneration(route: InferenceRoute, upstreamPath: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    if (!this.ready) throw ApiErrors.shuttingDown();
    const body = await readRequestBody(req, this.config.maxBodyBytes);
    const parsed = parseInferenceRequest(route, body, this.config.blockSize);
    if (parsed.model !== undefined && this.modelId !== null && parsed.model !== this.modelId) throw ApiErrors.modelNotFound(parsed.model);

    const now = performance.now();
    const view = this.table.view(now);
    if (view.workers.length === 0) throw ApiErrors.noHealthyWorkers();
    const outcome = this.policy.select({
      pool: view,
      load: view,
      inputTokens: parsed.inputTokens,
      prefix: this.policy.usesPrefix ? this.prefixSignal(parsed) : undefined,
      random: this.random,
    });
    this.book(outcome);
    if (!outcome.ok) throw ApiErrors.selectionFailed();

    this.inflightTotal++;
    try {
      await this.dispatchTo(outcome, parsed, body, upstreamPath, req, res, started);
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

  /** Book the selection's metrics exactly as the policy labelled it; nothing is re-derived. */
  private book(outcome: SelectionOutcome): void {
    const m = this.metrics;
    const policy = this.policy.name;
    const model = this.modelId ?? 'unknown';
    if (outcome.inertWarning) {
      this.log.warn(QUEUE_GATE_INERT_MESSAGE, { model, worker_queue_limit: this.config.workerQueueLimit, workers: this.table.workers.length });
    }
    const audit = outcome.audit;
    if (audit) {
      m.admissionEvaluated.inc([], audit.admissionEvaluated);
      m.admissionRejected.inc([], audit.admissionRejected);
      m.guardCompared.inc([], audit.pressureGuardComparedPairs);
      m.guardOverrides.inc([], audit.pressureGuardOverrides);
      m.monitorDecisions.inc([audit.prefillPressureSource]);
    }
    for (const w of outcome.gateRejected ?? []) {
      m.gateRejected.inc([model, w.id]);
      (w as Worker).gateRejectionsTotal++;
    }
    if (!outcome.ok) {
      m.selectionFailures.inc([policy, outcome.reason]);
      return;
    }
    m.policyDecisions.inc([policy, outcome.reason]);
    if (outcome.decision) m.cacheDecisions.inc([model, outcome.decision]);
    if (outcome.divertedOverlapBlocks !== undefined) m.divertedOverlap.observe([model], outcome.divertedOverlapBlocks);
    if (outcome.partialDiversion) m.partialDiversions.inc([model]);
    if (outcome.reason === 'saturation_pin' && this.pinLogCounter++ % 64 === 0) {
      this.log.info(SATURATION_PIN_LOG_MESSAGE, { model, worker: outcome.worker.id });
    }
  }

  private pinLogCounter = 0;

  /**
   * Send to the chosen worker; if it refuses before any byte reached the client,
   * try once more on another (the request was booked once, at selection).
   */
  private async dispatchTo(
    selection: SelectionSuccess,
    parsed: InferenceRequest,
    body: Buffer,
    path: string,
    req: IncomingMessage,
    res: ServerResponse,
    started: number,
  ): Promise<void> {
    let worker = selection.worker as Worker;
    for (let attempt = 0; attempt < 2; attempt++) {
      const mayRetry = attempt === 0;
      const now = performance.now();
      if (!worker.breaker.acquire(now)) {
        const next = mayRetry ? this.retryTarget(selection, worker) : undefined;
        if (!next) throw ApiErrors.noHealthyWorkers();
        this.metrics.retries.inc(['breaker_open']);
        worker = next;
        continue;
      }
      this.index.record(worker.slot, parsed.prefixHashes);
      worker.inflight++;
      worker.requestsTotal++;
      let outcome: ForwardOutcome;
      try {
        outcome = await forward(worker, req, res, { path, body, timeoutMs: this.config.requestTimeoutSecs * 1000, mayRetry });
      } finally {
        worker.inflight--;
      }
      const model = this.modelId ?? 'unknown';
      switch (outcome.kind) {
        case 'relayed': {
          this.settleBreaker(worker, outcome.status, now);
          if (outcome.midStreamError) worker.breaker.failure(performance.now());
          this.metrics.workerRequests.inc([worker.url, model, 'plain', outcome.midStreamError ? 'error' : outcomeFromStatus(outcome.status)]);
          if (outcome.streamed) {
            this.metrics.streamOutcomes.inc([worker.url, model, outcome.midStreamError ? 'upstream_error' : 'ok']);
            if (!outcome.midStreamError && outcome.status === 200 && outcome.firstByteAt !== undefined) {
              this.metrics.ttft.observe([model], (outcome.firstByteAt - started) / 1000);
            }
          }
          this.metrics.duration.observe([model], (performance.now() - started) / 1000);
          return;
        }
        case 'cancelled':
          worker.breaker.release();
          this.metrics.workerRequests.inc([worker.url, model, 'plain', 'cancelled']);
          if (parsed.stream) this.metrics.streamOutcomes.inc([worker.url, model, 'client_disconnect']);
          return;
        case 'failed':
          worker.breaker.failure(performance.now());
          this.metrics.workerRequests.inc([worker.url, model, 'plain', 'error']);
          throw outcome.reason === 'timeout' ? ApiErrors.upstreamTimeout() : ApiErrors.upstreamUnreachable();
        case 'retryable': {
          if (outcome.status === undefined) worker.breaker.failure(performance.now());
          else this.settleBreaker(worker, outcome.status, now);
          this.metrics.workerRequests.inc([worker.url, model, 'plain', outcome.status === undefined ? 'error' : outcomeFromStatus(outcome.status)]);
          const next = this.retryTarget(selection, worker);
          if (!next) {
            throw outcome.status === undefined ? ApiErrors.upstreamUnreachable() : new ApiError(outcome.status === 429 || outcome.status === 503 ? 503 : 502, outcome.status === 429 || outcome.status === 503 ? 'service_overloaded' : 'upstream_unreachable', 'upstream worker failed and no other worker could take the request');
          }
          this.metrics.retries.inc([outcome.status === undefined ? 'connect' : `status_${outcome.status}`]);
          this.log.debug('retrying on another worker', { from: worker.url, to: next.url, reason: outcome.reason });
          worker = next;
          continue;
        }
      }
    }
  }

  private settleBreaker(worker: Worker, status: number, now: number): void {
    if (status === 429 || status === 503) worker.breaker.backpressure();
    else if (status >= 500) worker.breaker.failure(now);
    else worker.breaker.success();
  }

  /** Another routable worker: the selection's backup, else the next one in pool order. */
  private retryTarget(selection: SelectionSuccess, failed: Worker): Worker | undefined {
    const now = performance.now();
    const backup = selection.backup as Worker | undefined;
    if (backup && backup !== failed && backup.breaker.wouldAllow(now) && this.table.isInPool(backup)) return backup;
    const pool = this.table.view(now).workers;
    for (let i = 0; i < pool.length; i++) {
      const w = pool[this.retryCursor++ % pool.length] as Worker;
      if (w !== failed && w.breaker.wouldAllow(now)) return w;
    }
    return undefined;
  }
}

const GET_ROUTES = { '/v1/models': 1, '/healthz': 1, '/readyz': 1, '/metrics': 1, '/admin/state': 1, '/admin/stream': 1 };

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
