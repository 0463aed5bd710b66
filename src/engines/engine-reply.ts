import { request } from 'undici';
import type { Dispatcher } from 'undici';

/**
 * The most the router reads of any one engine reply it parses (load, metrics, info,
 * models). A reply is counted by the bytes actually read, so a chunked or endless
 * body is cut off here too, not only one that declares a large Content-Length
 * (docs/engine-load.md, "Bounded reads").
 */
export const ENGINE_REPLY_MAX_BYTES = 4 * 1024 * 1024;

/** Bytes of a non-2xx body drained to keep the connection reusable; past this it is closed. */
const DRAIN_LIMIT = 64 * 1024;

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

/** A body as undici hands it over: an async iterable of chunks that can be destroyed. */
export interface ReplyBody extends AsyncIterable<Uint8Array> {
  destroy(err?: Error): unknown;
}

/**
 * Read a body as UTF-8 text, but never more than `maxBytes`: undefined when it is
 * larger, declared or not. The stream is destroyed at the first byte over the cap,
 * so memory stays bounded whatever the sender does.
 */
export async function readBoundedText(
  body: ReplyBody,
  headers: Record<string, string | string[] | undefined>,
  maxBytes: number = ENGINE_REPLY_MAX_BYTES,
): Promise<string | undefined> {
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    body.destroy();
    return undefined;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * GET one engine endpoint. Never throws: every way of not getting a usable reply is
 * a value, classified as the poll-failure causes in docs/engine-load.md.
 */
export async function getEngineReply(url: string, opts: EngineGetOptions): Promise<EngineReply> {
  const maxBytes = opts.maxBytes ?? ENGINE_REPLY_MAX_BYTES;
  try {
    const res = await request(url, {
      method: 'GET',
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      signal: opts.signal ?? AbortSignal.timeout(opts.timeoutMs),
      ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
      ...(opts.headers ? { headers: opts.headers } : {}),
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump({ limit: DRAIN_LIMIT }).catch(() => undefined);
      return { kind: 'status', status: res.statusCode };
    }
    const text = await readBoundedText(res.body, res.headers, maxBytes);
    if (text === undefined) return { kind: 'error', reason: 'too_large', detail: `reply larger than ${formatBytes(maxBytes)}` };
    return { kind: 'ok', status: res.statusCode, text };
  } catch (err) {
    return { kind: 'error', ...classifyFailure(err, opts.timeoutMs) };
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

function formatBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}
