import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher as UndiciDispatcher } from 'undici';
import type { Worker } from '../workers/worker.js';
import { ClientGone } from './client-gone.js';
import { endToEndHeaders } from './hop-by-hop.js';
import { ApiErrors, sseErrorEvent } from '../server/api-error.js';

/** One request as sent to any worker; built once, reused by a retry. */
export interface UpstreamRequest {
  readonly path: string;
  /** The client's body bytes as read: one buffer, or the chunks it arrived in (sent as they are). */
  readonly body: Buffer | readonly Buffer[];
  readonly headers: Record<string, string | string[]>;
  readonly timeoutMs: number;
}

export type UpstreamResponse = UndiciDispatcher.ResponseData;

/** How sending to one worker ended, before anything reached the client. */
export type SendOutcome =
  /** The worker answered with a status line and headers; nothing was relayed yet. */
  | { readonly kind: 'response'; readonly response: UpstreamResponse }
  /** The client went away first. */
  | { readonly kind: 'cancelled' }
  /** The worker could not be reached, or broke the connection or the protocol. */
  | { readonly kind: 'unreachable'; readonly code: string }
  /** No response headers within the request timeout. */
  | { readonly kind: 'timeout' }
  /** The router could not even build the request (argument checks, its own bug): not the worker's doing. */
  | { readonly kind: 'router_error'; readonly error: unknown };

/** How relaying a response to the client ended. */
export type RelayOutcome =
  | { readonly kind: 'completed'; readonly streamed: boolean; readonly firstByteAt: number | undefined }
  /**
   * The response broke off after the status line: the worker cut it or went silent
   * past the timeout, or (`byRouter`) the router itself tore the connection down, as
   * a shutdown that cuts in-flight requests does.
   */
  | { readonly kind: 'cut'; readonly streamed: boolean; readonly firstByteAt: number | undefined; readonly timedOut: boolean; readonly byRouter: boolean }
  | { readonly kind: 'cancelled'; readonly streamed: boolean };

const CANCELLED: SendOutcome = Object.freeze({ kind: 'cancelled' });
const TIMEOUT: SendOutcome = Object.freeze({ kind: 'timeout' });

/** undici codes that mean the worker (or the network to it) failed. */
const WORKER_FAULT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_INFO',
  'UND_ERR_HEADERS_OVERFLOW',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);
/** System errno codes (ECONNREFUSED, ECONNRESET, EAI_AGAIN, …), not node's own ERR_* codes. */
const ERRNO_CODE = /^E(?!RR_)[A-Z0-9_]+$/;

/**
 * Whose failure an error from sending a request is. Only the worker's (unreachable,
 * reset, malformed answer) and timeouts count against its breaker; anything else —
 * undici refusing an argument or a header, a feature it does not support, a pool the
 * router closed, a TypeError — is the router's own and must not (docs/retries-and-breaker.md).
 */
export function classifyUpstreamError(err: unknown): 'timeout' | 'unreachable' | 'router' {
  const e = err as { code?: unknown; name?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (WORKER_FAULT_CODES.has(code) || ERRNO_CODE.test(code) || code.startsWith('HPE_') || e?.name === 'HTTPParserError') return 'unreachable';
  return 'router';
}

/**
 * One client request's calls to workers: at most one at a time, sharing one abort
 * signal, so a client that disconnects at any point — during an attempt, while its
 * response streams, or between an attempt and the retry — aborts the upstream
 * request at once, which frees the engine's slot.
 *
 * Sending and relaying are separate steps so the relay sees the status before
 * committing: a failure status is discarded (and may be retried), and only a
 * response the router relays can make the worker the owner of the request's prefix.
 */
export class UpstreamCall {
  readonly #gone = new ClientGone();
  readonly #res: ServerResponse;
  readonly #onClose = (): void => {
    if (!this.#res.writableFinished) this.#gone.abort();
  };

  constructor(res: ServerResponse) {
    this.#res = res;
    res.once('close', this.#onClose);
  }

  /** The client went away: nothing more is worth sending. */
  get cancelled(): boolean {
    return this.#gone.aborted;
  }

  /** Detach from the client response; call once, when the request is done. */
  done(): void {
    this.#res.off('close', this.#onClose);
  }

  async send(worker: Worker, r: UpstreamRequest): Promise<SendOutcome> {
    const signal = this.#gone;
    if (signal.aborted) return CANCELLED;
    try {
      const response = await worker.pool.request({
        path: r.path,
        method: 'POST',
        headers: r.headers,
        // A body still in its arrival chunks goes as a stream of them, made per attempt.
        body: Buffer.isBuffer(r.body) ? r.body : Readable.from(r.body as Buffer[], { objectMode: false }),
        signal,
        headersTimeout: r.timeoutMs,
        bodyTimeout: r.timeoutMs,
      });
      return { kind: 'response', response };
    } catch (err) {
      if (signal.aborted) return CANCELLED;
      switch (classifyUpstreamError(err)) {
        case 'timeout':
          return TIMEOUT;
        case 'unreachable':
          return { kind: 'unreachable', code: (err as { code?: string }).code ?? 'HPE' };
        case 'router':
          return { kind: 'router_error', error: err };
      }
    }
  }

  /** Drop a response that will not be relayed (a failure status before a retry). */
  async discard(response: UpstreamResponse): Promise<void> {
    await response.body.dump().catch(() => undefined);
  }

  /**
   * Relay the response as it arrives, with backpressure (the socket is not read
   * faster than the client drains). A failure after bytes reached the client ends an
   * SSE stream with an error event rather than a silent cut.
   */
  relay(response: UpstreamResponse, extra?: { headers?: Readonly<Record<string, string>> | undefined; onChunk?: ((chunk: Buffer) => void) | undefined }): Promise<RelayOutcome> {
    const res = this.#res;
    const contentType = String(response.headers['content-type'] ?? '');
    const streamed = contentType.startsWith('text/event-stream');
    try {
      const headers = endToEndHeaders(response.headers);
      if (extra?.headers) Object.assign(headers, extra.headers);
      res.writeHead(response.statusCode, headers);
    } catch (err) {
      // A header node will not send (the worker's, but the router's problem to report).
      response.body.destroy();
      throw err;
    }
    if (streamed) res.flushHeaders();
    return relayBody(response.body, res, this.#gone, streamed, extra?.onChunk);
  }
}

/**
 * Pipe by hand rather than with stream.pipeline: pipeline destroys the client
 * response on an upstream error, and we need to end an SSE stream with an error
 * event instead, and to tell an upstream failure from a client that left.
 */
function relayBody(body: Readable, res: ServerResponse, signal: ClientGone, streamed: boolean, onChunk?: (chunk: Buffer) => void): Promise<RelayOutcome> {
  return new Promise((resolve) => {
    let firstByteAt: number | undefined;
    let settled = false;
    const settle = (o: RelayOutcome): void => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      res.off('drain', onDrain);
      resolve(o);
    };
    const onData = (chunk: Buffer): void => {
      firstByteAt ??= performance.now();
      onChunk?.(chunk);
      if (!res.write(chunk)) body.pause();
    };
    const onDrain = (): void => void body.resume();
    body.on('data', onData);
    res.on('drain', onDrain);
    body.once('end', () => {
      res.end();
      settle({ kind: 'completed', streamed, firstByteAt });
    });
    body.once('error', (err: Error) => {
      if (signal.aborted) {
        settle({ kind: 'cancelled', streamed });
        return;
      }
      // The worker failed mid-body: tell a streaming client in-band, then end.
      if (streamed && !res.writableEnded && !res.destroyed) {
        res.end(sseErrorEvent(ApiErrors.upstreamIncomplete()));
      } else if (!res.destroyed) {
        res.destroy();
      }
      const cause = classifyUpstreamError(err);
      settle({ kind: 'cut', streamed, firstByteAt, timedOut: cause === 'timeout', byRouter: cause === 'router' });
    });
    res.once('close', () => {
      if (res.writableFinished) return;
      body.destroy();
      settle({ kind: 'cancelled', streamed });
    });
  });
}
