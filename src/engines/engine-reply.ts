import { getGlobalDispatcher } from 'undici';
import type { Dispatcher } from 'undici';

/**
 * The most the router reads of any one engine reply it parses (load, metrics, info,
 * models). A reply is counted by the bytes actually read, so a chunked or endless
 * body is cut off here too, not only one that declares a large Content-Length
 * (docs/engine-load.md, "Bounded reads").
 */
export const ENGINE_REPLY_MAX_BYTES = 4 * 1024 * 1024;

/** Bytes of a non-2xx body drained to keep the connection reusable; past this it is closed. */
export const DRAIN_LIMIT = 64 * 1024;

/** Why a reply could not be had at all (docs/engine-load.md, "Poll failures"). */
export type TransportFailure = 'timeout' | 'connect' | 'too_large';

export type EngineReply =
  /** 2xx, the body read whole (within the byte cap). */
  | { kind: 'ok'; status: number; text: string }
  /** Any other status; the body is discarded. */
  | { kind: 'status'; status: number }
  | { kind: 'error'; reason: TransportFailure; detail: string };

export interface EngineGetOptions {
  /** Budget for the headers and, separately, for the body. */
  timeoutMs: number;
  dispatcher?: Dispatcher;
  /** An overall budget shared by several requests; defaults to `timeoutMs` for this one. */
  signal?: AbortSignal;
  maxBytes?: number;
  headers?: Record<string, string>;
}

/**
 * GET one engine endpoint. Never throws: every way of not getting a usable reply is
 * a value, classified as the poll-failure causes in docs/engine-load.md.
 *
 * This is the load poll's path, run a thousand times a second in front of a large
 * fleet, so it dispatches with a handler that gathers the chunks itself: no response
 * stream, no async iteration, no AbortSignal per request (each of those allocated
 * more than the reply; docs/engine-load.md §Polling a large fleet). The overall
 * budget is one timer, cleared when the reply ends.
 */
export function getEngineReply(url: string, opts: EngineGetOptions): Promise<EngineReply> {
  return new Promise<EngineReply>((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch (err) {
      resolve({ kind: 'error', ...classifyFailure(err, opts.timeoutMs) });
      return;
    }
    const handler = new ReplyHandler(opts.maxBytes ?? ENGINE_REPLY_MAX_BYTES, opts.timeoutMs, resolve, opts.signal);
    try {
      (opts.dispatcher ?? getGlobalDispatcher()).dispatch(
        {
          origin: target.origin,
          path: target.pathname + target.search,
          method: 'GET',
          headersTimeout: opts.timeoutMs,
          bodyTimeout: opts.timeoutMs,
          ...(opts.headers ? { headers: opts.headers } : {}),
        },
        handler,
      );
    } catch (err) {
      handler.onResponseError(undefined, err as Error);
    }
  });
}

/** Why the handler itself cut a reply short; never seen outside this file. */
class ReplyCut extends Error {
  constructor(readonly cut: 'too_large' | 'drained' | 'timeout') {
    super(cut);
    this.name = cut === 'timeout' ? 'TimeoutError' : 'ReplyCut';
  }
}

/**
 * One reply, gathered: 2xx bodies up to the byte cap, other bodies drained up to
 * DRAIN_LIMIT so that the connection can be reused, and closed past it.
 */
class ReplyHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly timeoutMs: number,
    private readonly resolve: (reply: EngineReply) => void,
    private readonly signal: AbortSignal | undefined,
  ) {
    if (signal) {
      if (signal.aborted) {
        this.onAbort = undefined;
        this.timer = undefined;
        this.finish({ kind: 'error', ...classifyFailure(signal.reason, timeoutMs) });
        return;
      }
      this.onAbort = () => this.cut(signal.reason instanceof Error ? signal.reason : new ReplyCut('timeout'));
      signal.addEventListener('abort', this.onAbort, { once: true });
    } else {
      this.timer = setTimeout(() => this.cut(new ReplyCut('timeout')), timeoutMs);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new ReplyCut('timeout'));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.status = statusCode;
    if (statusCode < 200 || statusCode >= 300) return;
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > this.maxBytes) controller.abort(new ReplyCut('too_large'));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.byteLength;
    if (this.status < 200 || this.status >= 300) {
      if (this.size > DRAIN_LIMIT) controller.abort(new ReplyCut('drained'));
      return;
    }
    if (this.size > this.maxBytes) {
      controller.abort(new ReplyCut('too_large'));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.status < 200 || this.status >= 300) {
      this.finish({ kind: 'status', status: this.status });
      return;
    }
    const text = this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks, this.size).toString('utf8');
    this.finish({ kind: 'ok', status: this.status, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (err instanceof ReplyCut && err.cut === 'drained') this.finish({ kind: 'status', status: this.status });
    else if (err instanceof ReplyCut && err.cut === 'too_large') {
      this.finish({ kind: 'error', reason: 'too_large', detail: `reply larger than ${formatBytes(this.maxBytes)}` });
    } else this.finish({ kind: 'error', ...classifyFailure(err, this.timeoutMs) });
  }

  /** Abort the exchange (the socket is closed); the reply settles when undici reports the abort, or now if it has not started. */
  private cut(err: Error): void {
    if (this.controller) this.controller.abort(err);
    else this.onResponseError(undefined, err);
  }

  private finish(reply: EngineReply): void {
    if (this.settled) return;
    this.settled = true;
    this.chunks = [];
    if (this.timer) clearTimeout(this.timer);
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort);
    this.resolve(reply);
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/** timeout: no (complete) answer in time; connect: anything else at the transport level. */
export function classifyFailure(err: unknown, timeoutMs: number): { reason: 'timeout' | 'connect'; detail: string } {
  const e = (err ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || (typeof e.code === 'string' && TIMEOUT_CODES.has(e.code))) {
    return { reason: 'timeout', detail: `no answer within ${timeoutMs} ms` };
  }
  const message =
    typeof e.message === 'string' && e.message !== '' ? e.message.split('\n')[0]! : typeof e.code === 'string' ? e.code : String(err);
  return { reason: 'connect', detail: message };
}

export function formatBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}
