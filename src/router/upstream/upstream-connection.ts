import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { isIP } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { ResponseParser } from '../../net/index.js';
import type { ResponseSink } from '../../net/index.js';
import { UpstreamFailure } from './upstream-failure.js';
import type { Attempt } from './upstream-attempt.js';
import { deadlines } from './deadline-sweep.js';
import type { Expiring } from './deadline-sweep.js';

/** Where a worker's connections go. */
export interface Origin {
  readonly host: string;
  readonly port: number;
  /** The Host header: the URL's host and port as written. */
  readonly hostHeader: string;
  /** The worker URL's own path, which every request path follows. */
  readonly base: string;
  readonly tls: boolean;
}

/** What a connection tells the pool it belongs to (upstream-pool.ts). */
export interface ConnectionOwner {
  /** Send `a` again on a new connection (a reused one closed before answering). */
  again(a: Attempt): void;
  /** The response is over: keep the connection for the next request, or close it. */
  release(c: UpstreamConnection, reusable: boolean, hintMs: number): void;
  /** The connection is closed. */
  lost(c: UpstreamConnection): void;
}

/**
 * How soon after a request is sent a close on a kept connection counts as the worker
 * having closed it while idle (its answer to bytes on a closed socket comes in one round
 * trip; this allows for a busy event loop). Past it, the worker had the request.
 */
const STALE_CLOSE_MS = 100;

/**
 * A request that fits node's buffer pool (4 KiB, head and body) goes out as one buffer
 * in one write. A corked head and body take node's vectored write, which leaves young
 * objects on the socket's old write state (the corked entries, and the fresh list that
 * replaces them): with requests spread over 4,096 workers, one more old page per worker
 * for each scavenge to scan (docs/dependencies.md §What a large fleet keeps alive).
 * Larger requests keep the corked writes: a buffer of their own and the copy cost more
 * than the write saves (`npm run perf -- overhead --sizes 16k`: 16 KB prompts ran at
 * 0.89× a bare proxy's rate joined, 0.93× corked).
 */
const ONE_WRITE_MAX_BYTES = Buffer.poolSize >>> 1;

function lengthOf(chunks: readonly Buffer[]): number {
  let n = 0;
  for (const c of chunks) n += c.length;
  return n;
}

/** The request's head (latin1) and body in one buffer. */
function joined(head: string, body: Buffer | readonly Buffer[], bodyLength: number): Buffer {
  const out = Buffer.allocUnsafe(head.length + bodyLength);
  let at = out.write(head, 0, 'latin1');
  if (Buffer.isBuffer(body)) body.copy(out, at);
  else for (const c of body) at += c.copy(out, at);
  return out;
}

/** System errno codes, as the socket reports them. */
const ERRNO_CODE = /^E(?!RR_)[A-Z0-9_]+$/;

/**
 * One keep-alive connection to a worker, carrying one request at a time: writes the
 * request, reads the answer with a ResponseParser, and hands it to the request's
 * handler as it arrives. It has one deadline at a time, checked by the process's sweep
 * (deadline-sweep.ts): the connect timeout, then the request's, then the idle one.
 */
export class UpstreamConnection implements ResponseSink, Expiring {
  readonly #socket: Socket;
  readonly #parser = new ResponseParser(true);
  readonly #pool: ConnectionOwner;
  #attempt: Attempt | undefined;
  #connected = false;
  /** It has answered before: a close before any byte of the next answer may be the worker's idle timeout. */
  #reused = false;
  /** The handler asked for no more data; the socket itself stops only when more comes (most pauses end before it does). */
  #paused = false;
  #socketPaused = false;
  /** What arrived while paused, for the resume. */
  #stash: Buffer[] | undefined;
  #gone = false;
  readonly #tls: boolean;
  /** When the request under way was sent (performance.now()). */
  #sentAt = 0;
  /**
   * performance.now() past which the connection times out; Infinity while the client is
   * behind. Set to a number here, before the constructor's: a field that starts out
   * undefined holds any value, so V8 boxed each new deadline in a fresh heap number,
   * and at 4,096 workers every idle connection's last one lived to be promoted
   * (docs/dependencies.md §What a large fleet keeps alive). A field that starts as a
   * number is written in place.
   */
  #deadline = 0;
  readonly #connectTimeoutMs: number;

  constructor(pool: ConnectionOwner, origin: Origin, connectTimeoutMs: number) {
    this.#pool = pool;
    this.#tls = origin.tls;
    const socket = origin.tls
      ? connectTls({
          host: origin.host,
          port: origin.port,
          servername: isIP(origin.host) === 0 ? origin.host : undefined,
          ALPNProtocols: ['http/1.1'],
        })
      : connect({ host: origin.host, port: origin.port, noDelay: true });
    if (origin.tls) socket.setNoDelay(true);
    this.#socket = socket;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#deadline = performance.now() + connectTimeoutMs;
    deadlines.add(this);
    socket.once(origin.tls ? 'secureConnect' : 'connect', () => {
      this.#connected = true;
      const a = this.#attempt;
      if (a !== undefined && !this.#paused) this.#deadline = performance.now() + a.request.timeoutMs;
    });
    socket.on('data', (chunk: Buffer) => this.#data(chunk));
    socket.on('end', () => this.#ended(undefined));
    socket.on('error', (err) => this.#ended(err));
    socket.on('close', () => this.#ended(undefined));
  }

  /** Send `a` on this connection. */
  run(a: Attempt): void {
    this.#attempt = a;
    a.connection = this;
    const now = performance.now();
    this.#sentAt = now;
    this.#deadline = now + (this.#connected ? a.request.timeoutMs : this.#connectTimeoutMs);
    const socket = this.#socket;
    const body = a.request.body;
    const bodyLength = Buffer.isBuffer(body) ? body.length : lengthOf(body);
    if (a.head.length + bodyLength < ONE_WRITE_MAX_BYTES) return void socket.write(joined(a.head, body, bodyLength));
    socket.cork();
    socket.write(a.head, 'latin1');
    if (Buffer.isBuffer(body)) socket.write(body);
    else for (const chunk of body) socket.write(chunk);
    socket.uncork();
  }

  /** Idle until the next request, for at most `idleMs`. */
  park(idleMs: number): void {
    this.#deadline = performance.now() + idleMs;
  }

  /** The sweep's check: past its deadline, the connection times out. */
  expire(now: number): void {
    if (now >= this.#deadline) this.#timeout();
  }

  pause(): void {
    this.#paused = true;
    // The client is behind, not the worker: no deadline until it catches up.
    this.#deadline = Infinity;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    const a = this.#attempt;
    if (a !== undefined) this.#deadline = performance.now() + (this.#connected ? a.request.timeoutMs : this.#connectTimeoutMs);
    if (this.#socketPaused) {
      this.#socketPaused = false;
      this.#socket.resume();
    }
    this.#unstash();
  }

  /** One chunk at a time, so that an answer that ends mid-stash sees what followed it. */
  #unstash(): void {
    while (this.#stash !== undefined && !this.#paused) {
      const chunk = this.#stash.shift()!;
      if (this.#stash.length === 0) this.#stash = undefined;
      this.#data(chunk);
    }
  }

  /** Close without a word to whoever holds it (the request was given up, or the connection is not reusable). */
  abandon(): void {
    this.#attempt = undefined;
    this.#close();
  }

  /** Close now; the request under way fails with `err`. */
  destroy(err: Error): void {
    const a = this.#attempt;
    this.abandon();
    a?.fail(err);
  }

  // ------------------------------------------------------------ the parser's sink

  head(p: ResponseParser): boolean {
    const a = this.#attempt;
    if (a === undefined) return false;
    // An informational 1xx precedes the real status line and is not an answer.
    if (p.status >= 200) a.handler.onResponseStart(a, p.status, p.headers!);
    return this.#attempt === a;
  }

  body(chunk: Buffer): boolean {
    const a = this.#attempt;
    if (a === undefined) return false;
    a.handler.onResponseData(a, chunk);
    return this.#attempt === a;
  }

  // ------------------------------------------------------------ the socket's side

  #data(chunk: Buffer): void {
    if (this.#paused) {
      (this.#stash ??= []).push(chunk);
      if (!this.#socketPaused) {
        this.#socketPaused = true;
        this.#socket.pause();
      }
      return;
    }
    const a = this.#attempt;
    if (a === undefined) {
      // Bytes nobody asked for: the connection's framing is lost.
      this.#close();
      return;
    }
    // A byte from the worker: its silence starts again.
    this.#deadline = performance.now() + a.request.timeoutMs;
    const step = this.#parser.feed(chunk, this);
    if (step === 'more' || step === 'stopped') return;
    if (step === 'done') return this.#complete(a);
    this.destroy(new UpstreamFailure('UPSTREAM_MALFORMED', `malformed response: ${step}`));
  }

  #complete(a: Attempt): void {
    const p = this.#parser;
    // Bytes past the answer (in its last chunk, or after it) mean the framing is lost.
    const reusable = p.keepAlive && !p.trailing && this.#stash === undefined;
    const hint = p.keepAliveHintMs;
    this.#attempt = undefined;
    // Nothing of this answer stays with the idle connection.
    p.reset();
    this.#stash = undefined;
    this.#reused = true;
    // The handler may have paused at the head, and the whole answer came with it.
    this.#paused = false;
    if (this.#socketPaused) {
      this.#socketPaused = false;
      this.#socket.resume();
    }
    this.#pool.release(this, reusable, hint);
    a.end();
  }

  #timeout(): void {
    const a = this.#attempt;
    if (a === undefined) return this.#close();
    const [code, what] = !this.#connected
      ? (['UPSTREAM_CONNECT_TIMEOUT', 'no connection'] as const)
      : this.#parser.inBody
        ? (['UPSTREAM_BODY_TIMEOUT', 'no body byte'] as const)
        : (['UPSTREAM_HEADERS_TIMEOUT', 'no status line'] as const);
    const ms = this.#connected ? a.request.timeoutMs : undefined;
    this.destroy(new UpstreamFailure(code, ms === undefined ? `${what} in time` : `${what} within ${ms} ms`));
  }

  /** The socket ended, broke or closed: the request on it completes (a body until close), goes again, or fails. */
  #ended(err: Error | undefined): void {
    if (this.#gone) return;
    // What arrived before the end counts, though the client is behind.
    if (this.#stash !== undefined) {
      this.#paused = false;
      this.#unstash();
      if (this.#gone) return;
    }
    const a = this.#attempt;
    this.#attempt = undefined;
    this.#close();
    if (a === undefined) return;
    // Only a clean close ends a body framed by the close; a reset cuts it.
    if (err === undefined && this.#parser.closed()) {
      this.#parser.reset();
      return a.end();
    }
    // A kept connection closed under a request it never answered, within a round trip of
    // sending: the worker had closed it idle. Later, the worker had the request.
    if (this.#reused && !this.#parser.started && !a.retried && performance.now() - this.#sentAt <= STALE_CLOSE_MS)
      return this.#pool.again(a);
    const code = (err as { code?: unknown } | undefined)?.code;
    if (err !== undefined && typeof code === 'string' && ERRNO_CODE.test(code)) return a.fail(err);
    if (err !== undefined && this.#tls && !this.#connected) return a.fail(new UpstreamFailure('UPSTREAM_TLS', err.message));
    a.fail(new UpstreamFailure('UPSTREAM_CLOSED', 'the worker closed the connection before the response was complete'));
  }

  #close(): void {
    if (this.#gone) return;
    this.#gone = true;
    deadlines.delete(this);
    this.#socket.destroy();
    this.#pool.lost(this);
  }
}
