import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyChunks } from '../../net/index.js';
import type { Logger } from '../logging/logger.js';
import { WorkerBookings } from '../metrics/index.js';
import type { RouterMetrics } from '../metrics/index.js';
import type { LoadView, Policy, PolicyWorker, PoolState, PrefixSignal, SelectionOutcome, SelectionSuccess } from '../policies/index.js';
import type { InferenceRequest } from '../request/inference-request.js';
import { ApiErrors } from '../api-error/api-error.js';
import type { RequestTrace } from '../state/decisions/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { PrefixIndex } from '../state/prefix-index/index.js';
import type { PrefixLookup } from '../state/prefix-lookup.js';
import { PrefillTicket, predictedUncachedTokens } from '../policies/prefill-rate/index.js';
import { EngineUsage } from '../state/decisions/index.js';
import type { Worker } from '../upstream/worker.js';
import { UpstreamCall } from './upstream-exchange.js';
import type { UpstreamRequest } from './upstream-exchange.js';
import { upstreamRequestHeaders } from './hop-by-hop.js';
import { settle } from './settlement.js';
import type { AttemptEnd, AttemptFailure } from './settlement.js';

export interface RelayDeps {
  table: LoadTable;
  index: PrefixIndex;
  metrics: RouterMetrics;
  log: Logger;
  timeoutMs: number;
  /** The model label metrics are booked under. */
  model: () => string;
  policy: Policy;
  /** The request's prefix matches over the current pool. */
  prefix: PrefixLookup;
  random: () => number;
  /** Tokens per block when requests are keyed by engine tokens (events index), else null: how matched blocks become cached tokens. */
  tokenBlockSize: () => number | null;
}

/** One client request on its way to a worker: what was selected for it, and where to answer. */
export interface RelayJob {
  /** The booked first selection. */
  readonly selection: SelectionSuccess;
  readonly parsed: InferenceRequest;
  /** The client's body as read, forwarded as is: never re-serialised, never joined. */
  readonly body: BodyChunks;
  /** The worker path to send it to (the route the client called). */
  readonly path: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** performance.now() when the request arrived: TTFT and duration count from here. */
  readonly startedAt: number;
  /** The decision record's side of the request, when decisions are recorded (docs/decisions.md). */
  readonly trace?: RequestTrace | undefined;
}

/** A selection, and the prefix signal the policy read for it. */
export interface Selected {
  readonly outcome: SelectionOutcome;
  readonly prefix: PrefixSignal | undefined;
}

/**
 * Takes a selected worker to a finished response: counts the request in flight,
 * relays it, settles the breaker and the worker metrics, records the prefix for the
 * worker that served it, and retries once, through a fresh selection without the
 * failed worker, when nothing reached the client yet. The rules are in
 * docs/retries-and-breaker.md.
 */
export class Relay {
  /** Whether the policy reads the prefix: if not, requests are not keyed and owners not recorded. */
  readonly usesPrefix: boolean;
  /**
   * Whether a served request makes its worker an owner of its prefix. Off when the
   * index is built from the engines' KV events: the engine then says what it holds.
   */
  recordsOwners: boolean;

  constructor(private readonly deps: RelayDeps) {
    this.usesPrefix = deps.policy.usesPrefix;
    this.recordsOwners = this.usesPrefix;
  }

  /**
   * One selection through the configured policy, with the prefix signal it read (the
   * decision record tells it). The first one (nothing excluded) is booked by the
   * caller; a retry's (`exclude` set) is not: the reference books a decision at
   * selection, once per request.
   */
  select(parsed: InferenceRequest, view: PoolState & LoadView, exclude?: Worker): Selected {
    const policy = this.deps.policy;
    let prefix: PrefixSignal | undefined;
    if (policy.usesPrefix) {
      if (this.recordsOwners && parsed.prefixHashes.length > 0) parsed.prefixHints ??= new Int32Array(parsed.prefixHashes.length);
      prefix = this.deps.prefix.signal(parsed.prefixHashes, parsed.prefixHints);
    }
    const outcome = policy.select({ pool: view, load: view, inputTokens: parsed.inputTokens, prefix, random: this.deps.random, exclude });
    parsed.prefixSignal = prefix;
    return { outcome, prefix };
  }

  /**
   * Send to the chosen worker; if it refuses or fails before any byte reached the
   * client, select once more without it and send there. Every way out either
   * relays a worker's response or throws the router's own ApiError.
   */
  async send(job: RelayJob): Promise<void> {
    const { parsed, body } = job;
    const bytes = body.chunks.length === 1 ? body.chunks[0]! : body.chunks;
    const request: UpstreamRequest = {
      path: job.path,
      body: bytes,
      headers: upstreamRequestHeaders(job.req.headers, body.length),
      timeoutMs: this.deps.timeoutMs,
    };
    const call = new UpstreamCall(job.res);
    try {
      let worker = job.selection.worker as Worker;
      for (let attempt = 0; ; attempt++) {
        const failure = await this.attempt(worker, parsed, request, call, job.startedAt, job.trace);
        if (failure === undefined) return;
        if (call.cancelled) return;
        if (!failure.retryable || attempt > 0) throw failure.error;
        const next = this.retryTarget(parsed, worker);
        if (next === undefined) throw failure.error;
        job.trace?.retried(next);
        this.deps.metrics.retries.inc([failure.cause]);
        this.deps.log.debug('retrying on another worker', { from: worker.url, to: next.url, reason: failure.cause });
        worker = next;
      }
    } finally {
      call.done();
    }
  }

  /** Each worker's own series, by slot: a slot another worker took since gets its own. */
  readonly #books: Array<WorkerBookings | undefined> = [];

  #bookings(worker: Worker): WorkerBookings {
    const b = this.#books[worker.slot];
    if (b !== undefined && b.url === worker.url) return b;
    return (this.#books[worker.slot] = new WorkerBookings(this.deps.metrics, worker.url));
  }

  /** A fresh selection over the current pool without the failed worker; not booked. */
  private retryTarget(parsed: InferenceRequest, failed: Worker): Worker | undefined {
    const view = this.deps.table.view(performance.now());
    if (view.workers.length === 0) return undefined;
    const { outcome } = this.select(parsed, view, failed);
    return outcome.ok && outcome.worker !== failed ? (outcome.worker as Worker) : undefined;
  }

  /** One attempt on one worker: undefined when the client got its answer (or left). */
  private async attempt(
    worker: Worker,
    parsed: InferenceRequest,
    request: UpstreamRequest,
    call: UpstreamCall,
    started: number,
    trace: RequestTrace | undefined,
  ): Promise<AttemptFailure | undefined> {
    const taken = this.take(worker, parsed);
    if (!(taken instanceof Taken)) return taken;
    // A prefill sample counts the engine's own tokens where its usage says them.
    const usage = taken.prefill.quiet && parsed.stream ? new EngineUsage() : undefined;
    let end: AttemptEnd;
    try {
      end = await call.attempt(worker, request, usage === undefined ? trace : usage.watching(trace), this.firstByte(taken, parsed));
    } catch (err) {
      this.abandon(taken);
      throw err;
    }
    return this.finish(taken, end, parsed.stream, started, trace, usage);
  }

  /**
   * Take a worker for one attempt: its breaker claimed, the request counted in flight
   * and sent, and (under an events index) where the prefix went remembered. Every
   * front's attempt begins here (the relay above, the endpoint picker's watched
   * exchange), and ends in `finish` or `abandon`.
   */
  take(worker: Worker, parsed: InferenceRequest): Taken | AttemptFailure {
    const breaker = worker.breaker;
    if (!breaker.acquire(performance.now())) return { error: ApiErrors.breakerOpen(), cause: 'breaker_open', retryable: true };
    worker.inflight++;
    worker.requestsTotal++;
    // The prefill this request asks of the worker: a TTFT sample, when the engine had nothing waiting.
    const own = this.uncachedTokens(worker, parsed);
    const basic = this.deps.table.basic(worker);
    const prefill = new PrefillTicket(worker.prefill, own, basic?.waiting === 0, basic?.queuedTokens);
    // Under an events index the engine announces the prefix only once it has computed it: until then, the router remembers where it sent it.
    if (parsed.prefixHashes.length > 0) this.deps.prefix.predicted?.record(parsed.prefixHashes, worker);
    // Verdicts come when the request is over, possibly after the breaker changed: the
    // generation tells a stale verdict from the probe's.
    return new Taken(worker, breaker.generation, this.#bookings(worker), this.deps.model(), prefill, parsed.inputTokens);
  }

  /** The prompt tokens `worker` is expected to compute for the request: all but what the index says it holds. */
  uncachedTokens(worker: PolicyWorker, parsed: InferenceRequest): number {
    return predictedUncachedTokens(parsed.inputTokens, parsed.prefixSignal, worker, this.deps.tokenBlockSize());
  }

  /**
   * What the first byte of a 2xx on its way to the client (and only that) does: the
   * request's prefill is over, and (unless the engines' events say it) the worker
   * becomes the owner of its prefix.
   */
  firstByte(taken: Taken, parsed: InferenceRequest): () => void {
    const prefill = taken.prefill;
    // A non-streamed response's first byte comes when the whole generation is done: its prefill is over, but its time says nothing of lateness.
    const arrived = parsed.stream
      ? (): void => {
          const now = performance.now();
          prefill.arrived(now - taken.sentAt, now);
        }
      : (): void => prefill.begun();
    if (!this.recordsOwners) return arrived;
    const worker = taken.worker;
    return () => {
      arrived();
      this.deps.index.record(worker.slot, parsed.prefixHashes, parsed.prefixHashes.length, parsed.prefixHints);
    };
  }

  /**
   * Settle a taken attempt by where it ended (settlement.ts): the breaker's verdict,
   * the worker's and the stream's bookings, TTFT and duration, the decision record's
   * end. Returns what the client is owed if this was the last attempt.
   */
  finish(
    taken: Taken,
    end: AttemptEnd,
    streamRequested: boolean,
    started: number,
    trace: RequestTrace | undefined,
    usage?: EngineUsage,
  ): AttemptFailure | undefined {
    const { metrics, log } = this.deps;
    const { worker, gen, book, model } = taken;
    const breaker = worker.breaker;
    try {
      if (end.at === 'relay' && (end.relayed.kind === 'completed' || end.relayed.kind === 'cut'))
        trace?.done(end.status, end.relayed.firstByteAt);
      const s = settle(end, streamRequested);
      if (s.verdict === 'success') breaker.success(gen);
      else if (s.verdict === 'failure') breaker.failure(performance.now(), gen);
      else if (s.verdict === 'backpressure') breaker.backpressure(gen);
      else breaker.release(gen);
      if (s.booking !== null) book.request(model, s.booking);
      if (s.stream !== null) book.stream(model, s.stream);
      const ttftAt = s.ttftAt;
      if (ttftAt !== undefined) {
        const ttft = (ttftAt - started) / 1000;
        metrics.ttft.observe([model], ttft);
        book.ttft(ttft);
        const enginePrompt = usage?.prompt();
        if (enginePrompt !== undefined) worker.prefill.observeScale(enginePrompt, taken.inputTokens);
        // From the send, not the arrival: a retry's first attempt is not this engine's time.
        taken.prefill.firstByte(ttftAt - taken.sentAt, usage?.uncached());
      }
      if (s.duration) observeDuration(metrics, book, model, started);
      if (s.log !== undefined) log[s.log.level](s.log.msg, { worker: worker.url, ...s.log.fields });
      return s.failure;
    } finally {
      taken.prefill.begun();
      worker.inflight--;
    }
  }

  /**
   * An attempt that ended in the router's own error (a bug, or a response header node
   * refuses to send): no verdict on the worker, but a claimed probe must not stay claimed.
   */
  abandon(taken: Taken): void {
    taken.prefill.begun();
    taken.worker.breaker.release(taken.gen);
    taken.worker.inflight--;
  }
}

/** A worker taken for one attempt (`Relay.take`): what settling it needs. */
export class Taken {
  /** performance.now() when the worker was taken: its TTFT sample counts from here. */
  readonly sentAt = performance.now();

  constructor(
    readonly worker: Worker,
    /** The breaker's generation when the attempt began. */
    readonly gen: number,
    readonly book: WorkerBookings,
    readonly model: string,
    /** Its prefill on the worker: pending until the first byte, then a sample of the worker's rate. */
    readonly prefill: PrefillTicket,
    /** The router's count of the request's prompt tokens. */
    readonly inputTokens: number,
  ) {}
}

/** End-to-end duration, for the model and for the worker that served it. */
function observeDuration(metrics: RouterMetrics, book: WorkerBookings, model: string, started: number): void {
  const seconds = (performance.now() - started) / 1000;
  metrics.duration.observe([model], seconds);
  book.duration(seconds);
}
