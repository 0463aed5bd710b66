import type { ServerResponse } from 'node:http';
import type { UpstreamRequestOptions } from '../upstream/upstream-attempt.js';
import type { Worker } from '../upstream/worker.js';
import { endToEndHeaders } from './hop-by-hop.js';
import { CANCELLED } from './outcomes.js';
import type { RelayOutcome, SendOutcome } from './outcomes.js';
import { UpstreamExchange } from './upstream-exchange.js';
import type { RelayExtras } from './upstream-exchange.js';

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
