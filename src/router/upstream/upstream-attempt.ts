/** What a handler can do to its request while it runs. */
export interface UpstreamController {
  /** Stop reading the worker's socket (the client is behind). */
  pause(): void;
  resume(): void;
  /** Give up on the request: its connection closes, and the handler hears `reason` as its error. */
  abort(reason: Error): void;
}

/**
 * One request's events, in order: start; then the status and headers, body chunks and
 * the end — or an error at any point. At most one of end and error, once.
 */
export interface UpstreamHandler {
  onRequestStart(controller: UpstreamController): void;
  onResponseStart(controller: UpstreamController, statusCode: number, headers: Record<string, string | string[]>): void;
  onResponseData(controller: UpstreamController, chunk: Buffer): void;
  onResponseEnd(controller: UpstreamController): void;
  onResponseError(controller: UpstreamController, err: Error): void;
}

export interface UpstreamRequestOptions {
  readonly path: string;
  /** End-to-end headers, lower-cased; the host and the body's framing among them are the caller's. */
  readonly headers: Readonly<Record<string, string | string[]>>;
  /** The body as read: one buffer, or the chunks it arrived in, written in order. */
  readonly body: Buffer | readonly Buffer[];
  /** No status line, or no body byte while the client keeps up, for this long: a timeout. */
  readonly timeoutMs: number;
}

/**
 * One request on its way through the pool: the controller its handler holds. Once it
 * is over, what the handler does with it touches nothing, so a late call can never
 * reach a connection that serves the next request by then.
 */
export class Attempt implements UpstreamController {
  connection: { pause(): void; resume(): void; abandon(): void } | undefined;
  queued = false;
  over = false;
  /** Sent once more on a fresh connection, after a reused one closed before answering. */
  retried = false;

  constructor(
    readonly pool: { unqueue(a: Attempt): void },
    readonly head: string,
    readonly request: UpstreamRequestOptions,
    readonly handler: UpstreamHandler,
  ) {}

  pause(): void {
    this.connection?.pause();
  }

  resume(): void {
    this.connection?.resume();
  }

  abort(reason: Error): void {
    if (this.over) return;
    if (this.queued) this.pool.unqueue(this);
    this.connection?.abandon();
    this.fail(reason);
  }

  /** The response is complete. */
  end(): void {
    if (this.over) return;
    this.over = true;
    this.connection = undefined;
    this.handler.onResponseEnd(this);
  }

  fail(err: Error): void {
    if (this.over) return;
    this.over = true;
    this.connection = undefined;
    this.handler.onResponseError(this, err);
  }
}
