import type { ServerResponse } from 'node:http';
import type { UpstreamController, UpstreamHandler, UpstreamRequestOptions } from '../upstream/upstream-attempt.js';
import type { Worker } from '../upstream/worker.js';
import { endToEndHeaders } from './hop-by-hop.js';
import { ApiErrors, sseErrorEvent } from '../api-error/api-error.js';
import { classifyUpstreamError } from './upstream-error.js';
import { CANCELLED, TIMEOUT } from './outcomes.js';
import type { RelayOutcome, SendOutcome } from './outcomes.js';

/**
 * A failure response's body is read to keep the connection for the next request;
 * past this much it is cheaper to drop the connection than to keep reading.
 */
const DISCARD_LIMIT_BYTES = 128 * 1024;

/**
 * Where the exchange is: waiting for the status line; holding the body (paused) until
 * the relay decides; relaying it to the client; reading it away; over.
 */
type Phase = 'waiting' | 'held' | 'relaying' | 'discarding' | 'over';

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
 * One request to one worker, as the handler of the router's upstream pool: the response body goes
 * from the worker's socket straight into the client's response, with no stream and
 * no promise in between (docs/http-edge.md §Relay). The status and headers arrive
 * first and the body waits, paused, until the relay says whether to pass it on or
 * read it away — a failure status is never relayed, and only a relayed response
 * makes the worker the owner of the prefix.
 *
 * Backpressure is the worker socket's: when the client stops draining, the exchange
 * pauses the upstream parser until it does.
 */
export class UpstreamExchange implements UpstreamHandler {
  /** Set when the phase leaves `waiting` with a response (a 1xx is skipped). */
  statusCode = 0;
  headers: Record<string, string | string[]> = {};
  /** Settles when the status line arrived, or the request failed before it. */
  readonly started: Promise<SendOutcome>;

  #phase: Phase = 'waiting';
  #controller: UpstreamController | undefined;
  #resolveStart!: (o: SendOutcome) => void;
  #resolveEnd: ((o: RelayOutcome) => void) | undefined;
  #cancelled = false;
  // While held: what came before the relay decided (normally nothing; the parser is paused).
  #heldChunks: Buffer[] | undefined;
  #heldEnd = false;
  #heldError: Error | undefined;
  // While relaying.
  /**
   * The head the client is to get, written with the first body byte (or the end): until
   * then nothing has reached the client, and a worker that breaks its framing or closes
   * can still be replaced by another (docs/retries-and-breaker.md §Outcomes of one attempt).
   */
  #head: PendingHead | undefined;
  /** Called when the head is written: the worker is committed to (its prefix recorded). */
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
  #onChunk: ((chunk: Buffer) => void) | undefined;
  #awaitingDrain = false;
  /** Body bytes still to come under a Content-Length; -1 when the body is not framed by one. */
  #remaining = -1;
  #discarded = 0;
  /** The last two body bytes relayed (high byte first): whether an SSE event was left open. */
  #tail = 0x0a0a;

  readonly #res: ServerResponse;
  readonly #onDrain = (): void => {
    this.#awaitingDrain = false;
    this.#controller?.resume();
  };

  constructor(res: ServerResponse) {
    this.#res = res;
    this.started = new Promise((resolve) => (this.#resolveStart = resolve));
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

  onResponseStart(controller: UpstreamController, statusCode: number, headers: Record<string, string | string[]>): void {
    // An informational 1xx precedes the real status line.
    if (statusCode < 200 || this.#phase !== 'waiting') return;
    this.statusCode = statusCode;
    this.headers = headers;
    this.#phase = 'held';
    controller.pause();
    this.#resolveStart({ kind: 'response', response: this });
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
        this.#onChunk?.(chunk);
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
      case 'held':
        (this.#heldChunks ??= []).push(chunk);
        return;
      case 'discarding':
        this.#discarded += chunk.length;
        if (this.#discarded > DISCARD_LIMIT_BYTES) {
          this.#finish(undefined);
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
        this.#finish({ kind: 'completed', streamed: this.#streamed, firstByteAt: this.#firstByteAt });
        return;
      case 'held':
        this.#heldEnd = true;
        return;
      case 'discarding':
        this.#finish(undefined);
        return;
    }
  }

  onResponseError(_controller: UpstreamController, err: Error): void {
    switch (this.#phase) {
      case 'waiting':
        this.#phase = 'over';
        this.#resolveStart(this.#cancelled ? CANCELLED : sendFailure(err));
        return;
      case 'held':
        this.#heldError = err;
        return;
      case 'relaying':
        this.#relayFailed(err);
        return;
      case 'discarding':
        this.#finish(undefined);
        return;
    }
  }

  // ------------------------------------------------------------ the relay's side

  /**
   * Pass the response on: the worker's end-to-end headers (and the router's), then the
   * body as it arrives. The head goes out with the first body byte, so a worker that
   * breaks its response before one arrives is a `failed` outcome the relay may retry;
   * a failure after bytes reached the client ends an SSE stream with an error event
   * rather than a silent cut. `onCommit` runs when the head is written.
   */
  relay(headers: Record<string, string | string[]>, extras: RelayExtras | undefined, onCommit?: () => void): Promise<RelayOutcome> {
    this.#streamed = String(this.headers['content-type'] ?? '').startsWith('text/event-stream');
    if (extras?.headers) Object.assign(headers, extras.headers);
    this.#head = { status: this.statusCode, headers };
    this.#onCommit = onCommit;
    this.#onChunk = extras?.onChunk;
    const length = headers['content-length'];
    if (typeof length === 'string' && length !== '0') this.#remaining = Number(length);
    const done = new Promise<RelayOutcome>((resolve) => (this.#resolveEnd = resolve));
    this.#phase = 'relaying';
    const held = this.#heldChunks;
    this.#heldChunks = undefined;
    // The whole answer came with its head (the common short answer): it goes out at once.
    if (this.#heldEnd && this.#heldError === undefined && !this.#commit()) return done;
    if (held && this.#controller) for (const c of held) this.onResponseData(this.#controller, c);
    if (this.#heldError) this.#relayFailed(this.#heldError);
    else if (this.#heldEnd) this.onResponseEnd();
    else if (!this.#awaitingDrain) this.#controller?.resume();
    return done;
  }

  /** Read a response that will not be relayed (a failure status before a retry). */
  discard(): Promise<void> {
    const done = new Promise<RelayOutcome>((resolve) => (this.#resolveEnd = resolve));
    this.#phase = 'discarding';
    this.#heldChunks = undefined;
    if (this.#heldError || this.#heldEnd) this.#finish(undefined);
    else this.#controller?.resume();
    return done.then(() => undefined);
  }

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
      this.#finish({ kind: 'failed', streamed: this.#streamed, error: err as Error });
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
      this.#finish({ kind: 'failed', streamed: this.#streamed, error: err });
      return;
    }
    // Every byte its Content-Length promised was relayed and the response ended: what
    // failed after that is the connection, not this answer.
    if (this.#remaining === 0 && res.writableEnded) {
      this.#finish({ kind: 'completed', streamed: this.#streamed, firstByteAt: this.#firstByteAt });
      return;
    }
    if (this.#cancelled) {
      this.#finish({ kind: 'cancelled', streamed: this.#streamed });
      return;
    }
    // The worker failed mid-body: tell a streaming client in-band, then end — unless
    // the body was framed by a length, which an extra event would overrun.
    if (this.#streamed && !res.writableEnded && !res.destroyed && !res.hasHeader('content-length'))
      res.end(openEventEnd(this.#tail) + sseErrorEvent(ApiErrors.upstreamIncomplete()));
    else if (!res.destroyed) cutAfterFlush(res);
    const cause = classifyUpstreamError(err);
    this.#finish({
      kind: 'cut',
      streamed: this.#streamed,
      firstByteAt: this.#firstByteAt,
      timedOut: cause === 'timeout',
      byRouter: cause === 'router',
    });
  }

  #finish(outcome: RelayOutcome | undefined): void {
    if (this.#phase === 'over') return;
    this.#phase = 'over';
    if (this.#awaitingDrain) this.#res.off('drain', this.#onDrain);
    // discard() resolves with anything; relay() always gets its outcome.
    this.#resolveEnd?.(outcome ?? { kind: 'cancelled', streamed: this.#streamed });
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

/** A call whose client already left settles at once. */
const ALREADY_CANCELLED: Promise<SendOutcome> = Promise.resolve(CANCELLED);

/**
 * One client request's calls to workers, at most one at a time. A client that
 * disconnects at any point — during an attempt, while its response streams, or
 * between an attempt and the retry — aborts the upstream request at once, which
 * frees the engine's slot.
 *
 * Sending and relaying are separate steps so the relay sees the status before
 * committing: a failure status is read away (and may be retried), and only a
 * response the router relays can make the worker the owner of the request's prefix.
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
   * still under way (the relay threw before relaying or reading its answer) is given up,
   * so that its connection is never left paused for ever.
   */
  done(): void {
    this.#res.off('close', this.#onClose);
    this.#exchange?.cancel();
  }

  /** Send to `worker`; settles with its status line, or with why there is none. */
  send(worker: Worker, r: UpstreamRequest): Promise<SendOutcome> {
    if (this.#cancelled) return ALREADY_CANCELLED;
    const exchange = new UpstreamExchange(this.#res);
    this.#exchange = exchange;
    // The pool reports every failure, its own argument checks included, through the handler.
    worker.pool.dispatch(r, exchange);
    return exchange.started;
  }

  /** Read away the last response, which will not be relayed (a failure status before a retry). */
  discard(): Promise<void> {
    return this.#exchange!.discard();
  }

  /**
   * Relay the last response as it arrives, with backpressure (the worker's socket is
   * not read faster than the client drains).
   */
  relay(extras?: RelayExtras, onCommit?: () => void): Promise<RelayOutcome> {
    const exchange = this.#exchange!;
    return exchange.relay(endToEndHeaders(exchange.headers), extras, onCommit);
  }
}
