import type { ServerResponse } from 'node:http';
import type { UpstreamController, UpstreamHandler, UpstreamRequestOptions } from '../upstream/upstream-attempt.js';
import type { Worker } from '../upstream/worker.js';
import { endToEndHeaders } from './hop-by-hop.js';
import { ApiErrors, sseErrorEvent } from '../api-error/api-error.js';
import { classifyUpstreamError } from './upstream-error.js';
import { CANCELLED, TIMEOUT } from './outcomes.js';
import type { RelayOutcome, SendOutcome } from './outcomes.js';
import { isFailureStatus } from './settlement.js';
import type { AttemptEnd } from './settlement.js';

/**
 * A failure response's body is read to keep the connection for the next request;
 * past this much it is cheaper to drop the connection than to keep reading.
 */
const DISCARD_LIMIT_BYTES = 128 * 1024;

/**
 * Where the exchange is: waiting for the status line; relaying the response to the
 * client; reading a failure response away; over.
 */
type Phase = 'waiting' | 'relaying' | 'discarding' | 'over';

/** What the relay adds to a response: its own headers, and a look at every byte. */
export interface RelayExtras {
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly onChunk?: ((chunk: Buffer) => void) | undefined;
}

/** A status and headers the client has not been sent yet. */
interface PendingHead {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
}

/**
 * One attempt on one worker, as the handler of the router's upstream pool: it settles
 * with where the attempt ended (`AttemptEnd`), decided here as the response arrives, so
 * the relay makes one call and reads one answer (docs/architecture.md §The request walk).
 * The body goes from the worker's socket straight into the client's response, with no
 * stream and no promise in between (docs/http-edge.md §Relay). A failure status (429,
 * 5xx) is never relayed: it is read away so the connection can carry the next request,
 * and only a relayed 2xx makes the worker the owner of the prefix (`onCommit`).
 *
 * Backpressure is the worker socket's: when the client stops draining, the exchange
 * pauses the upstream parser until it does.
 */
export class UpstreamExchange implements UpstreamHandler {
  /** Settles once, with where the attempt ended. */
  readonly ended: Promise<AttemptEnd>;

  #phase: Phase = 'waiting';
  #status = 0;
  #controller: UpstreamController | undefined;
  #resolveEnd!: (end: AttemptEnd) => void;
  #cancelled = false;
  /**
   * The head the client is to get, written with the first body byte (or the end): until
   * then nothing has reached the client, and a worker that breaks its framing or closes
   * can still be replaced by another (docs/retries-and-breaker.md §Outcomes of one attempt).
   */
  #head: PendingHead | undefined;
  /** Called when a 2xx head is written: the worker is committed to (its prefix recorded). */
  #onCommit: (() => void) | undefined;
  /**
   * Body bytes that came before the head was written: kept to the end of the read they
   * came in, so that a framing error later in the same bytes (a chunk that overruns its
   * size) is still found before anything reaches the client.
   */
  #early: Buffer | undefined;
  /** More of them, past the first (the common answer has one). */
  #earlyMore: Buffer[] | undefined;
  readonly #flushEarly = (): void => {
    if (this.#phase === 'relaying' && this.#head !== undefined) this.#commit();
  };
  #streamed = false;
  #firstByteAt: number | undefined;
  readonly #extras: RelayExtras | undefined;
  #awaitingDrain = false;
  /** Body bytes still to come under a Content-Length; -1 when the body is not framed by one. */
  #remaining = -1;
  #discarded = 0;
  /** The last two body bytes relayed (high byte first): whether an SSE event was left open. */
  #tail = 0x0a0a;

  readonly #res: ServerResponse;
  readonly #worker: Worker;
  readonly #onDrain = (): void => {
    this.#awaitingDrain = false;
    this.#controller?.resume();
  };

  constructor(res: ServerResponse, worker: Worker, extras: RelayExtras | undefined, onCommit: (() => void) | undefined) {
    this.#res = res;
    this.#worker = worker;
    this.#extras = extras;
    this.#onCommit = onCommit;
    this.ended = new Promise((resolve) => (this.#resolveEnd = resolve));
  }

  /** The client went away: abort at once (or, if still queued in the pool, as soon as it starts). */
  cancel(): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    if (this.#phase !== 'over') this.#controller?.abort(new Error('the client went away'));
  }

  // ------------------------------------------------------------ the pool's side

  onRequestStart(controller: UpstreamController): void {
    this.#controller = controller;
    if (this.#cancelled) controller.abort(new Error('the client went away'));
  }

  onResponseStart(_controller: UpstreamController, statusCode: number, headers: Record<string, string | string[]>): void {
    // An informational 1xx precedes the real status line.
    if (statusCode < 200 || this.#phase !== 'waiting') return;
    this.#status = statusCode;
    if (isFailureStatus(statusCode)) {
      this.#phase = 'discarding';
      return;
    }
    this.#streamed = String(headers['content-type'] ?? '').startsWith('text/event-stream');
    const head = endToEndHeaders(headers);
    const extra = this.#extras?.headers;
    if (extra) Object.assign(head, extra);
    this.#head = { status: statusCode, headers: head };
    if (statusCode >= 300) this.#onCommit = undefined;
    const length = head['content-length'];
    if (typeof length === 'string' && length !== '0') this.#remaining = Number(length);
    this.#phase = 'relaying';
  }

  onResponseData(controller: UpstreamController, chunk: Buffer): void {
    switch (this.#phase) {
      case 'relaying':
        if (this.#head !== undefined) {
          if (this.#early === undefined) {
            this.#early = chunk;
            queueMicrotask(this.#flushEarly);
          } else (this.#earlyMore ??= []).push(chunk);
          return;
        }
        this.#firstByteAt ??= performance.now();
        this.#extras?.onChunk?.(chunk);
        this.#tail = lastTwoBytes(this.#tail, chunk);
        // The last bytes of a framed body end the response with them: node then sends
        // headers and body in one write, without a tick in between.
        if (this.#remaining >= 0 && (this.#remaining -= chunk.length) <= 0) {
          this.#res.end(chunk);
          return;
        }
        if (!this.#res.write(chunk) && !this.#awaitingDrain) {
          this.#awaitingDrain = true;
          controller.pause();
          this.#res.once('drain', this.#onDrain);
        }
        return;
      case 'discarding':
        this.#discarded += chunk.length;
        if (this.#discarded > DISCARD_LIMIT_BYTES) {
          this.#statusEnd();
          controller.abort(new Error('failure body too long to read away'));
        }
        return;
    }
  }

  onResponseEnd(): void {
    switch (this.#phase) {
      case 'relaying':
        if (this.#head !== undefined && !this.#commit()) return;
        if (!this.#res.writableEnded) this.#res.end();
        this.#relayEnd({ kind: 'completed', streamed: this.#streamed, firstByteAt: this.#firstByteAt });
        return;
      case 'discarding':
        this.#statusEnd();
        return;
    }
  }

  onResponseError(_controller: UpstreamController, err: Error): void {
    switch (this.#phase) {
      case 'waiting':
        this.#finish({ at: 'send', sent: this.#cancelled ? CANCELLED : sendFailure(err), workerRemoved: this.#worker.removed });
        return;
      case 'relaying':
        this.#relayFailed(err);
        return;
      case 'discarding':
        // The failure status stands; the connection it came on is dropped with the error.
        this.#statusEnd();
        return;
    }
  }

  // ------------------------------------------------------------ the client's side

  /**
   * Write the head, and the body bytes that waited for it: from here the response is
   * the client's, and this worker's. False when node refused a header (the worker's, but
   * the router's problem to report): the request is given up as the router's failure.
   */
  #commit(): boolean {
    const head = this.#head!;
    this.#head = undefined;
    try {
      this.#res.writeHead(head.status, head.headers);
    } catch (err) {
      this.#early = this.#earlyMore = undefined;
      this.#relayEnd({ kind: 'failed', streamed: this.#streamed, error: err as Error });
      this.#controller?.abort(err as Error);
      return false;
    }
    this.#onCommit?.();
    const early = this.#early;
    const more = this.#earlyMore;
    this.#early = this.#earlyMore = undefined;
    const c = this.#controller;
    if (early === undefined || c === undefined) return true;
    this.onResponseData(c, early);
    if (more !== undefined) for (const chunk of more) this.onResponseData(c, chunk);
    return true;
  }

  #relayFailed(err: Error): void {
    const res = this.#res;
    // Not a byte reached the client: another worker may still answer it.
    if (this.#head !== undefined && !this.#cancelled) {
      this.#early = this.#earlyMore = undefined;
      this.#relayEnd({ kind: 'failed', streamed: this.#streamed, error: err });
      return;
    }
    // Every byte its Content-Length promised was relayed and the response ended: what
    // failed after that is the connection, not this answer.
    if (this.#remaining === 0 && res.writableEnded) {
      this.#relayEnd({ kind: 'completed', streamed: this.#streamed, firstByteAt: this.#firstByteAt });
      return;
    }
    if (this.#cancelled) {
      this.#relayEnd({ kind: 'cancelled', streamed: this.#streamed });
      return;
    }
    // The worker failed mid-body: tell a streaming client in-band, then end — unless
    // the body was framed by a length, which an extra event would overrun.
    if (this.#streamed && !res.writableEnded && !res.destroyed && !res.hasHeader('content-length'))
      res.end(openEventEnd(this.#tail) + sseErrorEvent(ApiErrors.upstreamIncomplete()));
    else if (!res.destroyed) cutAfterFlush(res);
    const cause = classifyUpstreamError(err);
    this.#relayEnd({
      kind: 'cut',
      streamed: this.#streamed,
      firstByteAt: this.#firstByteAt,
      timedOut: cause === 'timeout',
      byRouter: cause === 'router',
    });
  }

  #relayEnd(relayed: RelayOutcome): void {
    this.#finish({ at: 'relay', status: this.#status, relayed });
  }

  #statusEnd(): void {
    this.#finish({ at: 'status', status: this.#status });
  }

  #finish(end: AttemptEnd): void {
    if (this.#phase === 'over') return;
    this.#phase = 'over';
    if (this.#awaitingDrain) this.#res.off('drain', this.#onDrain);
    this.#resolveEnd(end);
  }
}

/**
 * Close the client's connection once what was written of the response has gone out:
 * a body cut short, which its framing (a length not reached, or no last chunk) tells the
 * client, rather than a reset that can drop the bytes already sent.
 */
function cutAfterFlush(res: ServerResponse): void {
  const socket = res.socket;
  if (socket === null || socket.destroyed) return void res.destroy();
  socket.end();
  socket.once('finish', () => socket.destroy());
  // A client that never reads must not hold the socket open.
  socket.setTimeout(5000, () => socket.destroy());
}

/** The last two bytes relayed, high byte first, once `chunk` is. */
function lastTwoBytes(tail: number, chunk: Buffer): number {
  const n = chunk.length;
  if (n === 0) return tail;
  return n > 1 ? (chunk[n - 2]! << 8) | chunk[n - 1]! : ((tail << 8) | chunk[0]!) & 0xffff;
}

/**
 * What ends an SSE event the worker left open mid-way, so that the error event after it
 * is an event of its own and not more lines of the cut one.
 */
function openEventEnd(tail: number): string {
  if (tail === 0x0a0a) return '';
  return (tail & 0xff) === 0x0a ? '\n' : '\n\n';
}

/** How a request that failed before its status line ended, by whose failure it was. */
function sendFailure(err: Error): SendOutcome {
  switch (classifyUpstreamError(err)) {
    case 'timeout':
      return TIMEOUT;
    case 'unreachable':
      return { kind: 'unreachable', code: (err as { code?: string }).code ?? 'HPE', detail: err.message };
    case 'router':
      return { kind: 'router_error', error: err };
  }
}

/** One request as sent to any worker; built once, reused by a retry. */
export type UpstreamRequest = UpstreamRequestOptions;

/**
 * One client request's attempts on workers, at most one at a time. A client that
 * disconnects at any point — during an attempt, while its response streams, or
 * between an attempt and the retry — aborts the upstream request at once, which
 * frees the engine's slot.
 */
export class UpstreamCall {
  readonly #res: ServerResponse;
  #cancelled = false;
  #exchange: UpstreamExchange | undefined;
  readonly #onClose = (): void => {
    if (this.#res.writableFinished) return;
    this.#cancelled = true;
    this.#exchange?.cancel();
  };

  constructor(res: ServerResponse) {
    this.#res = res;
    res.once('close', this.#onClose);
  }

  /** The client went away: nothing more is worth sending. */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /**
   * Detach from the client response; call once, when the request is done. An exchange
   * still under way (the relay threw before its answer) is given up, so that its
   * connection is never left for ever.
   */
  done(): void {
    this.#res.off('close', this.#onClose);
    this.#exchange?.cancel();
  }

  /**
   * Send to `worker` and take its answer to the client (or read a failure status
   * away): settles with where the attempt ended. `onCommit` runs when a 2xx head
   * goes to the client.
   */
  attempt(worker: Worker, r: UpstreamRequest, extras?: RelayExtras, onCommit?: () => void): Promise<AttemptEnd> {
    if (this.#cancelled) return Promise.resolve({ at: 'send', sent: CANCELLED, workerRemoved: worker.removed });
    const exchange = new UpstreamExchange(this.#res, worker, extras, onCommit);
    this.#exchange = exchange;
    // The pool reports every failure, its own argument checks included, through the handler.
    worker.pool.dispatch(r, exchange);
    return exchange.ended;
  }
}
