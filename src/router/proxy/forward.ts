import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Worker } from '../workers/worker.js';
import { endToEndHeaders } from './hop-by-hop.js';

export interface ForwardOptions {
  path: string;
  body: Buffer;
  timeoutMs: number;
  /** When false, a refused or failed attempt is relayed to the client as is. */
  mayRetry: boolean;
}

export type ForwardOutcome =
  /** The response was relayed (any status); `status` is the worker's. */
  | { kind: 'relayed'; status: number; streamed: boolean; firstByteAt: number | undefined; midStreamError: boolean }
  /** Nothing reached the client; another worker may be tried. */
  | { kind: 'retryable'; status: number | undefined; reason: string }
  /** The client went away first. */
  | { kind: 'cancelled'; afterHeaders: boolean }
  /** The worker failed before any byte reached the client and no retry is allowed. */
  | { kind: 'failed'; reason: 'unreachable' | 'timeout' };

/** Worker statuses worth one try elsewhere, when nothing has been sent yet. */
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * Send a buffered request body to one worker and relay its response as it arrives,
 * with backpressure (the socket is not read faster than the client drains). A client
 * that disconnects aborts the upstream request at once, which frees the engine's
 * slot. A failure after bytes reached the client ends an SSE stream with an error
 * event rather than a silent cut.
 */
export async function forward(worker: Worker, req: IncomingMessage, res: ServerResponse, opts: ForwardOptions): Promise<ForwardOutcome> {
  const abort = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) abort.abort();
  };
  res.once('close', onClose);
  try {
    let up;
    try {
      up = await worker.pool.request({
        path: opts.path,
        method: 'POST',
        headers: { ...endToEndHeaders(req.headers), 'content-type': 'application/json', 'content-length': String(opts.body.length) },
        body: opts.body,
        signal: abort.signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
    } catch (err) {
      if (abort.signal.aborted) return { kind: 'cancelled', afterHeaders: false };
      const code = (err as { code?: string }).code ?? '';
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return { kind: 'failed', reason: 'timeout' };
      if (CONNECT_ERRORS.has(code) || code === '') {
        return opts.mayRetry ? { kind: 'retryable', status: undefined, reason: code || 'connect' } : { kind: 'failed', reason: 'unreachable' };
      }
      return { kind: 'failed', reason: 'unreachable' };
    }

    if (opts.mayRetry && RETRY_STATUSES.has(up.statusCode)) {
      await up.body.dump().catch(() => undefined);
      return { kind: 'retryable', status: up.statusCode, reason: `status_${up.statusCode}` };
    }

    const contentType = String(up.headers['content-type'] ?? '');
    const streamed = contentType.startsWith('text/event-stream');
    res.writeHead(up.statusCode, endToEndHeaders(up.headers));
    if (streamed) res.flushHeaders();
    return await relayBody(up.body, res, abort, up.statusCode, streamed);
  } finally {
    res.off('close', onClose);
  }
}

/**
 * Pipe by hand rather than with stream.pipeline: pipeline destroys the client
 * response on an upstream error, and we need to end an SSE stream with an error
 * event instead, and to tell an upstream failure from a client that left.
 */
function relayBody(body: Readable, res: ServerResponse, abort: AbortController, status: number, streamed: boolean): Promise<ForwardOutcome> {
  return new Promise((resolve) => {
    let firstByteAt: number | undefined;
    let settled = false;
    const settle = (o: ForwardOutcome): void => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      res.off('drain', onDrain);
      resolve(o);
    };
    const onData = (chunk: Buffer): void => {
      firstByteAt ??= performance.now();
      if (!res.write(chunk)) body.pause();
    };
    const onDrain = (): void => void body.resume();
    body.on('data', onData);
    res.on('drain', onDrain);
    body.once('end', () => {
      res.end();
      settle({ kind: 'relayed', status, streamed, firstByteAt, midStreamError: false });
    });
    body.once('error', () => {
      if (abort.signal.aborted) {
        settle({ kind: 'cancelled', afterHeaders: true });
        return;
      }
      // The worker failed mid-body: tell a streaming client in-band, then end.
      if (streamed && !res.writableEnded && !res.destroyed) {
        res.end(`data: ${JSON.stringify({ error: { type: 'server_error', code: 'upstream_body_incomplete', message: 'upstream worker ended the stream early' } })}\n\n`);
      } else if (!res.destroyed) {
        res.destroy();
      }
      settle({ kind: 'relayed', status, streamed, firstByteAt, midStreamError: true });
    });
    res.once('close', () => {
      if (res.writableFinished) return;
      body.destroy();
      settle({ kind: 'cancelled', afterHeaders: true });
    });
  });
}
