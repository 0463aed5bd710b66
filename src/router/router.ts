import { createTrackedServer } from '../net/index.js';
import { replayEndpoints } from '../engines/index.js';
import { engineBlockKeys, renderChat, tokenize } from '../prefix/index.js';
import { HfChatTokenizer } from '../tokenizer/index.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RouterConfig } from '../config/index.js';
import { bindError } from '../errors/index.js';
import { PROMETHEUS_CONTENT_TYPE } from '../prometheus/index.js';
import type { AdminDecisions, AdminState } from '../contract/index.js';
import type { Logger } from './logging/logger.js';
import { RouterMetrics, UNKNOWN_MODEL } from './metrics/index.js';
import { SelectionBooker } from './metrics/selection-booker.js';
import { createPolicy, fleetIsAllQueued, gateIsInert } from './policies/index.js';
import type { Policy } from './policies/index.js';
import { Relay } from './proxy/relay.js';
import type { InferenceRoute } from './request/inference-request.js';
import type { PromptTokenizer, RequestKeying, UnkeyedReason } from './request/request-keying.js';
import { requireJsonContentType } from './request/content-type.js';
import { ApiError, ApiErrors, sendApiError } from './server/api-error.js';
import { authorizeAdmin, decisionFilter, streamState, tokenDigest } from './server/admin-api.js';
import { streamCapture } from './server/admin-capture.js';
import { adminState } from './server/admin-state.js';
import { drainServer } from './server/drain.js';
import { GenerationPath } from './server/generation.js';
import { ANY_ALLOW, GET_ALLOW, POST_ALLOW, answerOptions, httpEdgeOptions } from './server/http-edge.js';
import { InflightRequests } from './server/inflight.js';
import { LoadPush, LoadSampler, LoadTable } from './state/load-monitor/index.js';
import { PrefixIndex } from './state/prefix-index/index.js';
import { PrefixLookup } from './state/prefix-lookup.js';
import { choosePrefixSource, eventFormat, eventKeying, keyingName, KvEventIndex, PredictedPrefixes } from './state/kv-index/index.js';
import type { EventKeying } from './state/kv-index/index.js';
import { DecisionRecorder, DecisionRing, RequestIds } from './state/decisions/index.js';
import { RequestCapture } from './state/capture/index.js';
import type { DecisionFilter } from './state/decisions/index.js';
import { WorkerStatus } from './state/worker-status.js';
import { EventWatcher } from './state/event-watcher.js';
import { WorkerRegistry } from './workers/worker-registry.js';
import type { Worker } from './workers/worker.js';

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
 * The router: wires the load table and sampler, the prefix index, the workers, the
 * policy and the relay to an HTTP front (node:http), and runs their lifecycle (start,
 * drain, close). The request path is in server/generation.ts, the admin document in
 * server/admin-state.ts. One process, one model.
 */
export class Router {
  readonly config: RouterConfig;
  readonly metrics: RouterMetrics;
  readonly table: LoadTable;
  readonly index: PrefixIndex;
  readonly registry: WorkerRegistry;
  readonly policy: Policy;
  private readonly sampler: LoadSampler;
  private readonly loadPush: LoadPush;
  private readonly events: EventWatcher;
  private eventTimer: NodeJS.Timeout | undefined;
  /** The prefix index fed by the engines' KV events; used when `prefixSource` is 'events'. */
  readonly kvIndex: KvEventIndex;
  /** The last --decision-log-size routing decisions (docs/decisions.md). */
  readonly decisions: DecisionRing;
  /** Completed requests for GET /admin/capture, while someone listens. */
  readonly capture = new RequestCapture();
  /** What the prefix index is built from, decided at start (docs/routing.md §Prefix from engine events). */
  prefixSource: 'requests' | 'events' = 'requests';
  /** How requests are keyed for the index: text until the events index is chosen (docs/routing.md §Keying requests). */
  private keying: RequestKeying;
  /** Kinds of unkeyed request already warned about: each is logged once. */
  private readonly unkeyedWarned = new Set<UnkeyedReason>();
  private readonly prefixLookup: PrefixLookup;
  private readonly routes = this.routeTable();
  private tokenizer: HfChatTokenizer | undefined;
  private relay!: Relay;
  private readonly status: WorkerStatus;
  private readonly log: Logger;
  private readonly version: string;
  private readonly simulated: boolean;
  private readonly server: Server;
  private readonly sockets: Set<Socket>;
  private readonly startedAt = Date.now();
  private readonly adminTokenDigest: Buffer | undefined;
  private readonly generation: GenerationPath;
  private readonly inflightRequests = new InflightRequests();
  private modelId: string | null;
  private address: AddressInfo | undefined;
  private ready = false;

  constructor(opts: RouterOptions) {
    const c = opts.config;
    this.config = c;
    this.log = opts.log;
    this.version = opts.version;
    this.simulated = opts.simulated ?? false;
    this.modelId = c.modelId;
    this.keying = { by: 'text', blockSize: c.blockSize };
    this.table = new LoadTable(c.loadFreshnessMs);
    this.table.setGate(c.workerQueueLimit, c.saturationQueueFloor);
    this.index = new PrefixIndex({ maxBlocks: c.prefixIndexMaxBlocks });
    this.loadPush = new LoadPush(this.table, () => performance.now());
    this.events = new EventWatcher(this.log);
    this.sampler = new LoadSampler(this.table, {
      intervalMs: c.loadPollIntervalMs,
      timeoutMs: c.loadTimeoutMs,
      now: () => performance.now(),
      pushed: (w) => this.loadPush.isLive(w),
      onStatus: (w, s) =>
        s.ok
          ? this.log.info('load sampling ok', { worker: w.url, source: s.source })
          : this.log.warn('no load sample', { worker: w.url, reason: s.reason }),
    });
    this.decisions = new DecisionRing(c.decisionLogSize);
    this.kvIndex = new KvEventIndex(this.index, this.log, { maxBlocks: c.prefixIndexMaxBlocks });
    this.prefixLookup = new PrefixLookup(
      this.index,
      (slot) => (this.prefixSource === 'events' ? this.kvIndex.workerAt(slot) : this.registry.bySlotIndex(slot)),
      (w) => this.table.isInPool(w),
    );
    const forgetPrefix = (w: Worker): void => {
      if (this.prefixSource === 'requests') return this.index.forgetWorker(w.slot);
      this.kvIndex.detach(w);
      this.prefixLookup.predicted?.forgetWorker(w);
    };
    this.registry = new WorkerRegistry(this.table, this.sampler, this.loadPush, forgetPrefix, this.log, {
      cbThreshold: c.cbThreshold > 0 ? c.cbThreshold : null,
      cbCoolDownMs: c.cbCoolDownSecs * 1000,
      connections: 1024,
      introspectTimeoutMs: 2000,
      connectTimeoutMs: Math.min(10_000, c.requestTimeoutSecs * 1000),
      now: () => performance.now(),
      kvEvents: c.kvEvents,
    });
    // Owners in the digest are named by URL, so replicas with the same workers compare.
    for (const url of c.workerUrls) this.index.setOwnerTag(this.registry.add(url).slot, url);
    this.status = new WorkerStatus(this.table, this.registry, this.sampler, this.loadPush, this.kvIndex);
    this.policy = createPolicy(c);
    this.adminTokenDigest = c.adminToken ? tokenDigest(c.adminToken) : undefined;
    this.metrics = new RouterMetrics({
      modelId: this.modelId ?? UNKNOWN_MODEL,
      cacheAware: c.policy === 'cache_aware',
      workers: () =>
        this.status.readings(performance.now()).map(({ worker: w, fresh, sampleAgeMs, healthy, polls }) => ({
          url: w.url,
          inflight: w.inflight,
          healthy,
          breakerState: w.breaker.state === 'closed' ? 0 : w.breaker.state === 'open' ? 1 : 2,
          waiting: fresh ? fresh.waiting : null,
          sampleAgeSeconds: sampleAgeMs === undefined ? null : sampleAgeMs / 1000,
          loadPollFailures: polls.failures,
        })),
      queueGateInert: () => this.gateInert(performance.now()),
      prefixIndexBlocks: () => this.index.size,
      prefixIndexEvictions: () => this.index.evictions,
      kvFeeds: () =>
        this.registry.workers.flatMap((w) => {
          const k = this.kvIndex.status(w);
          if (k === undefined) return [];
          return [
            {
              url: w.url,
              batches: k.stats.batches,
              gapsRepaired: k.stats.gapsRepaired,
              gapsLost: k.stats.gapsLost,
              decodeErrors: k.stats.decodeErrors,
              lagSeconds: k.lagSeconds,
              catchUp: k.stats.catchUp,
            },
          ];
        }),
    });
    const model = (): string => this.modelId ?? UNKNOWN_MODEL;
    const relay = new Relay({
      table: this.table,
      index: this.index,
      metrics: this.metrics,
      log: this.log,
      timeoutMs: c.requestTimeoutSecs * 1000,
      model,
      policy: this.policy,
      prefix: this.prefixLookup,
      random: opts.random ?? Math.random,
    });
    this.generation = new GenerationPath({
      config: c,
      table: this.table,
      relay,
      booker: new SelectionBooker(this.metrics, this.log, this.policy.name, model, c.workerQueueLimit, c.saturationQueueFloor),
      inflight: this.inflightRequests,
      modelId: () => this.modelId,
      ready: () => this.ready,
      keying: () => this.keying,
      unkeyed: (reason) => this.onUnkeyed(reason),
      decisions: new DecisionRecorder({
        ring: this.decisions,
        ids: new RequestIds(),
        metrics: this.metrics,
        model,
        policy: this.policy.name,
        workerQueueLimit: c.workerQueueLimit,
        header: c.decisionHeader,
        tokenBlockSize: () => (this.keying.by === 'tokens' ? this.keying.blockSize : null),
      }),
      capture: this.capture,
    });
    this.relay = relay;
    ({ server: this.server, sockets: this.sockets } = createTrackedServer((req, res) => void this.dispatch(req, res), httpEdgeOptions(c)));
  }

  get url(): string {
    if (!this.address) throw new Error('router is not listening');
    return `http://${this.address.family === 'IPv6' ? `[${this.address.address}]` : this.address.address}:${this.address.port}`;
  }

  get model(): string | null {
    return this.modelId;
  }

  /** Tokens per block of the prefix index's keys: the workers' advertised size under events, else --block-size. */
  get keyBlockSize(): number {
    return this.keying.by === 'none' ? this.config.blockSize : this.keying.blockSize;
  }

  /** Learn the workers, start sampling load, and listen. */
  async start(): Promise<string> {
    // A tokenizer that cannot be read stops the start with one line (RCTL_E_TOKENIZER).
    if (this.config.tokenizer !== null && this.config.prefixSource !== 'requests')
      this.tokenizer = HfChatTokenizer.load(this.config.tokenizer);
    await this.registry.introspectAll();
    this.applyPrefixSource();
    if (this.modelId === null) this.modelId = this.discoverModel();
    if (this.modelId !== null) this.metrics.setModelId(this.modelId);
    this.sampler.start();
    // Events are looked for off the request path, twice a second (and on each /admin/state).
    this.eventTimer = setInterval(() => this.watchEvents(performance.now()), 500);
    this.eventTimer.unref();
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
    const c = this.config;
    const limit =
      c.policy === 'cache_aware'
        ? `, worker-queue-limit ${c.workerQueueLimit ?? 'unset (gate off)'}${c.saturationQueueFloor !== null ? `, floor ${c.saturationQueueFloor}` : ''}, prefix from ${this.prefixSource}`
        : '';
    const n = this.registry.workers.length;
    this.events.started(`routing ${n} worker${n === 1 ? '' : 's'} at ${this.url}: policy ${c.policy}${limit}`);
    return this.url;
  }

  /** Apply `--prefix-source` (choosePrefixSource: docs/routing.md §Prefix from engine events), and say what was chosen and why. */
  private applyPrefixSource(): void {
    const c = this.config;
    const inputs = {
      wanted: c.prefixSource,
      usesPrefix: this.relay.usesPrefix,
      tokenizer: this.tokenizer !== undefined,
      blockSize: c.blockSize,
    };
    const choice = choosePrefixSource(this.registry.workers, inputs);
    if (choice.source === 'requests') {
      if (choice.reason !== null)
        (c.prefixSource === 'events' ? this.log.warn : this.log.info)('prefix index built from requests, not KV events', {
          prefix_source: c.prefixSource,
          reason: choice.reason,
        });
      return;
    }
    const { keying, indexed, unindexed } = choice;
    const { scheme, blockSize } = keying;
    this.prefixSource = 'events';
    this.keying = {
      by: 'tokens',
      blockSize,
      tokenizer: this.promptTokenizer(keying.tokenizer),
      keys: (tokens) => engineBlockKeys(tokens, blockSize, scheme),
    };
    this.relay.recordsOwners = false;
    if (c.predictedPrefixTtlMs > 0)
      this.prefixLookup.predicted = new PredictedPrefixes({
        ttlMs: c.predictedPrefixTtlMs,
        capacity: PREDICTED_PREFIXES,
        now: () => performance.now(),
      });
    if (unindexed.length > 0)
      this.log.warn('KV events: some workers are not indexed (they never count as prefix owners)', { workers: unindexed.join('; ') });
    this.log.info('prefix index built from KV events', {
      workers: indexed.length,
      hash: scheme,
      block_size: blockSize,
      tokenizer: keying.tokenizer,
    });
    if (keying.tokenizer === 'none')
      this.log.warn(
        'KV events without --tokenizer: token-id requests are keyed as the engines name their blocks; text prompts are routed without prefix affinity (sgl_router_prefix_unkeyed_requests_total)',
      );
    // A worker introspected later (it was down at start) joins once its facts are known.
    this.registry.onIntrospected = (w) => {
      const v = eventKeying(w.info, inputs).keying;
      if (v !== undefined && keyingName(v) === keyingName(keying)) this.attachEvents(w, v);
    };
    for (const w of indexed) this.attachEvents(w, keying);
  }

  /** Tokens as the engines compute them: the stand-in tokenizer for the simulator, the model's for a real engine, none without --tokenizer. */
  private promptTokenizer(kind: EventKeying['tokenizer']): PromptTokenizer | null {
    if (kind === 'stand-in') return { chat: (m) => tokenize(renderChat(m)), text: (t) => tokenize(t) };
    const tok = kind === 'model' ? this.tokenizer : undefined;
    if (tok === undefined) return null;
    return {
      // A model's template reads string contents; parts (images, audio) become tokens the router cannot know.
      chat: (m) =>
        m.every((x) => typeof x.content === 'string' || x.content === undefined || x.content === null) ? tok.encodeChat(m) : undefined,
      text: (t) => tok.encodeText(t),
    };
  }

  private attachEvents(w: Worker, keying: EventKeying): void {
    const push = w.info.push!;
    const replay = replayEndpoints(w.url, push);
    // Where they were found is logged with the worker's channels (worker-registry); their absence costs every later replica.
    if (replay.length === 0)
      this.log.warn('KV events: no replay endpoint known; a router replica started later begins empty', { worker: w.url });
    this.kvIndex.attach(w, {
      info: push,
      engine: eventFormat(w.info),
      replayEndpoints: replay,
      keying: keying.scheme === 'tokens' ? 'tokens' : 'engine_hash',
      blockSize: keying.blockSize,
    });
  }

  /** A request the keying could not key: counted, and said once per reason. */
  private onUnkeyed(reason: UnkeyedReason): void {
    this.metrics.unkeyedRequests.inc([reason]);
    if (this.unkeyedWarned.has(reason)) return;
    this.unkeyedWarned.add(reason);
    this.log.warn(
      reason === 'no_tokenizer'
        ? 'a text request cannot be keyed as the engines name their KV blocks without --tokenizer; it and others like it are routed without prefix affinity (sgl_router_prefix_unkeyed_requests_total)'
        : 'a chat with non-text content cannot be tokenized as the engine does; it and others like it are routed without prefix affinity (sgl_router_prefix_unkeyed_requests_total)',
      { reason },
    );
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
    const cut = await drainServer({
      server: this.server,
      sockets: this.sockets,
      drainMs: this.config.shutdownDrainSecs * 1000,
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
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
    this.loadPush.close();
    this.kvIndex.close();
    await this.sampler.stop();
    await this.registry.close();
  }

  get inflight(): number {
    return this.inflightRequests.count;
  }

  state(): AdminState {
    const now = performance.now();
    const readings = this.status.readings(now);
    this.watchEvents(now, readings);
    return adminState({
      config: this.config,
      metrics: this.metrics,
      readings,
      version: this.version,
      modelId: this.modelId,
      metricsModel: this.modelId ?? UNKNOWN_MODEL,
      simulated: this.simulated,
      startedAt: this.startedAt,
      url: this.address ? this.url : '',
      ready: this.ready,
      alerts: { all_queued: this.fleetAllQueued(now), gate_inert: this.gateInert(now) },
      prefixIndex: this.prefixIndexSummary(),
      blockSize: this.keyBlockSize,
      events: this.events.recent(),
    });
  }

  private watchEvents(now: number, readings = this.status.readings(now)): void {
    const diversions = this.metrics.cacheDecisions.get([this.modelId ?? UNKNOWN_MODEL, 'cache_worker_queued']);
    this.events.check(readings, this.config.workerQueueLimit, this.fleetAllQueued(now), diversions);
  }

  /** The prefix index's size and digest (PrefixIndex.digest, kept as pairs come and go). */
  private prefixIndexSummary(): AdminState['prefix_index'] {
    const d = this.index.digest();
    const unkeyed = this.metrics.unkeyedRequests;
    return {
      source: this.prefixSource,
      keyed_by: this.keying.by === 'tokens' ? (this.keying.tokenizer === null ? 'token_ids' : 'tokens') : 'text',
      blocks: d.blocks,
      owner_pairs: d.pairs,
      digest: d.digest,
      unkeyed_requests: { no_tokenizer: unkeyed.get(['no_tokenizer']), unsupported_input: unkeyed.get(['unsupported_input']) },
    };
  }

  private fleetAllQueued(now: number): boolean {
    return fleetIsAllQueued(this.table.view(now), this.config.workerQueueLimit);
  }

  private gateInert(now: number): boolean {
    return gateIsInert(this.table.view(now), this.config.workerQueueLimit);
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
  /**
   * Every path the router answers, with its methods (GET also answers HEAD: node:http
   * leaves the body out by itself), whether the admin token guards it, and its
   * handler. Generation routes are the ones counted in sgl_router_requests_total.
   */
  private routeTable(): ReadonlyMap<string, Route> {
    const generation = (route: InferenceRoute): Route => ({
      method: 'POST',
      admin: false,
      generation: route,
      handle: async (req, res, path) => {
        requireJsonContentType(req.headers['content-type']);
        await this.generation.handle(route, path, req, res);
      },
    });
    const get = (handle: Route['handle'], admin = false): Route => ({ method: 'GET', admin, handle });
    return new Map<string, Route>([
      ['/v1/chat/completions', generation('chat')],
      ['/v1/completions', generation('completions')],
      ['/generate', generation('generate')],
      [
        '/v1/models',
        get((_req, res) =>
          this.sendJson(res, 200, {
            object: 'list',
            data: this.modelId
              ? [{ id: this.modelId, object: 'model', created: Math.floor(this.startedAt / 1000), owned_by: 'routerctl' }]
              : [],
          }),
        ),
      ],
      ['/healthz', get((_req, res) => this.sendJson(res, 200, { status: 'ok' }))],
      [
        '/readyz',
        get((_req, res) => {
          const pool = this.table.view(performance.now()).workers.length;
          if (this.ready && pool > 0) return this.sendJson(res, 200, { status: 'ready', workers: pool });
          return this.sendJson(res, 503, { status: this.ready ? 'no_healthy_workers' : 'draining', workers: pool });
        }),
      ],
      [
        '/metrics',
        get((_req, res) => {
          const body = this.metrics.render();
          res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) });
          res.end(body);
        }),
      ],
      ['/admin/state', get((_req, res) => this.sendJson(res, 200, this.state()), true)],
      [
        '/admin/stream',
        get(
          (req, res) =>
            streamState(
              req,
              res,
              () => this.state(),
              (since) => this.decisions.query({ since, limit: 1000 }),
            ),
          true,
        ),
      ],
      ['/admin/decisions', get((req, res) => this.sendJson(res, 200, this.decisionsDoc(decisionFilter(req.url))), true)],
      ['/admin/capture', get((req, res) => streamCapture(req, res, this.capture, this.keyBlockSize), true)],
    ]);
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const method = req.method ?? 'GET';
    const route = this.routes.get(path);
    const counted = route?.generation !== undefined;
    // Draining: every answer closes its connection, so the client's next one goes elsewhere.
    if (!this.ready) res.setHeader('connection', 'close');
    try {
      if (route === undefined) {
        if (path === '*' && method === 'OPTIONS') return answerOptions(res, ANY_ALLOW);
        throw ApiErrors.notFound();
      }
      if (counted) this.metrics.requests.inc([path, method]);
      const allow = route.method === 'POST' ? POST_ALLOW : GET_ALLOW;
      if (method === 'OPTIONS') answerOptions(res, allow);
      else {
        if (route.method === 'POST' ? method !== 'POST' : method !== 'GET' && method !== 'HEAD') throw ApiErrors.methodNotAllowed(allow);
        if (route.admin) authorizeAdmin(req, this.adminTokenDigest);
        await route.handle(req, res, path);
      }
      if (counted) this.metrics.responses.inc([path, method, String(res.statusCode)]);
    } catch (err) {
      const apiErr = err instanceof ApiError ? err : ApiErrors.internal();
      if (!(err instanceof ApiError)) this.log.error('unexpected error handling a request', { path, error: (err as Error)?.message });
      sendApiError(res, apiErr);
      if (counted) this.metrics.responses.inc([path, method, String(apiErr.status)]);
      // Refused before its body was read (413, 415, shutting down): that body will not be read.
      if (apiErr.headers.connection === 'close' && !req.complete) res.once('finish', () => req.destroy());
    }
  }

  /** GET /admin/decisions (docs/decisions.md §Admin decisions). */
  decisionsDoc(filter: DecisionFilter = {}): AdminDecisions {
    return {
      worker_queue_limit: this.config.workerQueueLimit,
      block_size: this.keyBlockSize,
      capacity: this.decisions.capacity,
      recorded_total: this.decisions.total,
      memory_bytes: this.decisions.memoryBytes,
      decisions: this.decisions.query(filter),
    };
  }

  private sendJson(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

/** Requests remembered at once for the event gap: far more than arrive within one prefill. */
const PREDICTED_PREFIXES = 4096;

/** One path the router answers (Router.routeTable). */
interface Route {
  /** `GET` answers HEAD too. */
  readonly method: 'GET' | 'POST';
  /** Guarded by --admin-token. */
  readonly admin: boolean;
  /** Set on the generation routes: counted in sgl_router_requests_total and _responses_total. */
  readonly generation?: InferenceRoute;
  readonly handle: (req: IncomingMessage, res: ServerResponse, path: string) => void | Promise<void>;
}
