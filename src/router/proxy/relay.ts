import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyChunks } from '../../net/index.js';
import type { Logger } from '../logging/logger.js';
import { outcomeFromStatus, WorkerBookings } from '../metrics/index.js';
import type { RouterMetrics } from '../metrics/index.js';
import type { LoadView, Policy, PoolState, PrefixSignal, SelectionOutcome, SelectionSuccess } from '../policies/index.js';
import type { InferenceRequest } from '../request/inference-request.js';
import { ApiErrors } from '../api-error/api-error.js';
import type { ApiError } from '../api-error/api-error.js';
import type { RequestTrace } from '../state/decisions/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { PrefixIndex } from '../state/prefix-index/index.js';
import type { PrefixLookup } from '../state/prefix-lookup.js';
import type { Worker } from '../upstream/worker.js';
import { UpstreamCall } from './forward.js';
import type { UpstreamRequest } from './forward.js';
import { upstreamRequestHeaders } from './hop-by-hop.js';
import { classifyUpstreamError } from './upstream-error.js';

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

/** Why one attempt did not answer the client, and whether another worker may try. */
interface AttemptFailure {
  readonly error: ApiError;
  /** sgl_router_retries_total{reason} if a retry follows. */
  readonly cause: string;
  readonly retryable: boolean;
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
    const { metrics, log } = this.deps;
    const breaker = worker.breaker;
    if (!breaker.acquire(performance.now())) return { error: ApiErrors.breakerOpen(), cause: 'breaker_open', retryable: true };
    // Verdicts come when the request is over, possibly after the breaker changed: the
    // generation tells a stale verdict from the probe's.
    const gen = breaker.generation;
    const model = this.deps.model();
    const book = this.#bookings(worker);
    worker.inflight++;
    worker.requestsTotal++;
    // Under an events index the engine announces the prefix only once it has computed it: until then, the router remembers where it sent it.
    if (!this.recordsOwners && parsed.prefixHashes.length > 0) this.deps.prefix.predicted?.record(parsed.prefixHashes, worker);
    try {
      const sent = await call.send(worker, request);
      switch (sent.kind) {
        case 'cancelled':
          breaker.release(gen);
          book.request(model, 'cancelled');
          if (parsed.stream) book.stream(model, 'client_disconnect');
          return undefined;
        case 'router_error':
          breaker.release(gen);
          // The worker left the fleet under it (its drain time ran out): nothing reached the client, so another worker takes it.
          if (worker.removed) return { error: ApiErrors.upstreamUnreachable(), cause: 'worker_removed', retryable: true };
          // Not the worker's failure: no breaker verdict, no retry (it would fail alike anywhere).
          log.error('router error sending a request to a worker', {
            worker: worker.url,
            error: (sent.error as Error)?.message ?? String(sent.error),
          });
          return { error: ApiErrors.internal(), cause: 'internal', retryable: false };
        case 'timeout':
          // Not retried: the worker may still be working on it, and a second wait would
          // take the client past --request-timeout-secs.
          breaker.failure(performance.now(), gen);
          book.request(model, 'error');
          return { error: ApiErrors.upstreamTimeout(), cause: 'timeout', retryable: false };
        case 'unreachable':
          breaker.failure(performance.now(), gen);
          book.request(model, 'error');
          // Bytes that are not an answer (a 101 it never asked for, a broken head): the connection is closed; say why.
          if (sent.code === 'UPSTREAM_MALFORMED') {
            log.warn('worker answered with a malformed response', { worker: worker.url, error: sent.detail });
            return { error: ApiErrors.upstreamUnreachable(), cause: 'malformed', retryable: true };
          }
          return { error: ApiErrors.upstreamUnreachable(), cause: 'connect', retryable: true };
        case 'response':
          break;
      }

      const response = sent.response;
      const status = response.statusCode;
      if (status === 429 || status >= 500) {
        // A failure status is never relayed: the client gets the router's envelope,
        // from whichever attempt was last, never a mix of worker and router bodies.
        await call.discard();
        book.request(model, outcomeFromStatus(status));
        if (status === 429 || status === 503) breaker.backpressure(gen);
        else breaker.failure(performance.now(), gen);
        return { error: statusError(status), cause: `status_${status}`, retryable: true };
      }

      // Committed once the first byte goes to the client: this worker serves the request,
      // so then (and only then) it is the owner of the prefix, if it accepted it at all.
      const own =
        status < 300 && this.recordsOwners
          ? () => this.deps.index.record(worker.slot, parsed.prefixHashes, parsed.prefixHashes.length, parsed.prefixHints)
          : undefined;
      const relayed = await call.relay(trace, own);
      if (relayed.kind === 'completed' || relayed.kind === 'cut') trace?.done(status, relayed.firstByteAt);
      switch (relayed.kind) {
        case 'completed':
          // Only a response that completed is a success (docs/retries-and-breaker.md).
          breaker.success(gen);
          book.request(model, outcomeFromStatus(status));
          if (relayed.streamed) {
            book.stream(model, 'ok');
            if (status === 200 && relayed.firstByteAt !== undefined) {
              const ttft = (relayed.firstByteAt - started) / 1000;
              metrics.ttft.observe([model], ttft);
              book.ttft(ttft);
            }
          }
          observeDuration(metrics, book, model, started);
          return undefined;
        case 'cut':
          // Cut by the worker or silent past the timeout after the headers: a failure,
          // and never retried, since bytes may already have reached the client. A cut
          // the router made itself (its pool torn down) is no verdict on the worker.
          if (relayed.byRouter) breaker.release(gen);
          else breaker.failure(performance.now(), gen);
          book.request(model, relayed.byRouter ? 'cancelled' : 'error');
          if (relayed.streamed) book.stream(model, 'upstream_error');
          observeDuration(metrics, book, model, started);
          if (relayed.timedOut) log.warn('worker went silent mid-response; cut after the request timeout', { worker: worker.url });
          return undefined;
        case 'cancelled':
          breaker.release(gen);
          book.request(model, 'cancelled');
          if (relayed.streamed) book.stream(model, 'client_disconnect');
          return undefined;
        case 'failed':
          if (classifyUpstreamError(relayed.error) === 'router') {
            // A header node refused to send (the worker's, but the router's problem): no verdict, no retry.
            breaker.release(gen);
            log.error('router error relaying a response', { worker: worker.url, error: relayed.error.message });
            return { error: ApiErrors.internal(), cause: 'internal', retryable: false };
          }
          // Its status line came, then a broken framing or a close before any body byte:
          // nothing reached the client, so another worker may take it (docs/retries-and-breaker.md).
          breaker.failure(performance.now(), gen);
          book.request(model, 'error');
          log.warn('worker broke its response before the first byte reached the client', {
            worker: worker.url,
            status,
            error: relayed.error.message,
          });
          return { error: ApiErrors.upstreamIncomplete(), cause: 'broken_response', retryable: true };
      }
    } catch (err) {
      // Unexpected (a bug, or a response header node refuses to send): the router's
      // failure, so no verdict, but a claimed probe must not stay claimed.
      breaker.release(gen);
      throw err;
    } finally {
      worker.inflight--;
    }
  }
}

/** The router's answer when a worker's failure status is the last word. */
function statusError(status: number): ApiError {
  if (status === 429 || status === 503) return ApiErrors.upstreamOverloaded(status);
  if (status === 504) return ApiErrors.upstreamTimeout();
  return ApiErrors.upstreamError(status);
}

/** End-to-end duration, for the model and for the worker that served it. */
function observeDuration(metrics: RouterMetrics, book: WorkerBookings, model: string, started: number): void {
  const seconds = (performance.now() - started) / 1000;
  metrics.duration.observe([model], seconds);
  book.duration(seconds);
}
