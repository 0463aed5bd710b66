import { UpstreamFailure } from './upstream-failure.js';
import { Attempt } from './upstream-attempt.js';
import type { UpstreamHandler, UpstreamRequestOptions } from './upstream-attempt.js';
import { UpstreamConnection } from './upstream-connection.js';
import type { ConnectionOwner, Origin } from './upstream-connection.js';

export interface UpstreamPoolOptions {
  /** The most connections open to the worker at once; requests past it wait their turn. */
  readonly connections: number;
  readonly connectTimeoutMs: number;
  /** How long an idle connection is kept when the worker states no `Keep-Alive: timeout`. */
  readonly idleTimeoutMs: number;
}

/** A worker's stated keep-alive timeout is cut by this much, so the router never sends on a connection the worker is closing. */
const KEEP_ALIVE_MARGIN_MS = 1000;

/**
 * The router's keep-alive HTTP/1.1 connections to one worker, for the requests it
 * relays (docs/http-edge.md §Relay). One request per connection at a time, no
 * pipelining; an idle connection is reused most-recent first, and closed after the
 * worker's stated keep-alive timeout less a second, or `idleTimeoutMs`.
 *
 * Why not undici, which the router used here before: each undici connection keeps a
 * few objects of its last response until its next one. With 4,096 workers each used
 * every 0.4 s, those objects lived long enough to be promoted, and every young
 * collection grew with the fleet (BENCHMARKS.md, section 15). A connection here keeps
 * nothing of an answer past its end (docs/dependencies.md §Idle connections and the young generation).
 */
export class UpstreamPool implements ConnectionOwner {
  readonly origin: Origin;
  readonly #opts: UpstreamPoolOptions;
  readonly #idle: UpstreamConnection[] = [];
  readonly #live = new Set<UpstreamConnection>();
  readonly #queue: Attempt[] = [];
  #destroyed = false;
  #closed: (() => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(url: string, opts: UpstreamPoolOptions) {
    const u = new URL(url);
    const tls = u.protocol === 'https:';
    this.origin = {
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: Number(u.port || (tls ? 443 : 80)),
      hostHeader: u.host,
      base: u.pathname.replace(/\/+$/, ''),
      tls,
    };
    this.#opts = opts;
  }

  /** Connections open now, busy or idle. */
  get connections(): number {
    return this.#live.size;
  }

  /**
   * Send a request. Never throws: every failure, the router's own included, reaches the
   * handler as its error.
   */
  dispatch(request: UpstreamRequestOptions, handler: UpstreamHandler): void {
    const head = requestHead(this.origin, request);
    const attempt = new Attempt(this, head ?? '', request, handler);
    handler.onRequestStart(attempt);
    if (attempt.over) return;
    if (head === undefined) return attempt.fail(new UpstreamFailure('UPSTREAM_INVALID_REQUEST', 'a request header is not a valid field'));
    if (this.#destroyed || this.#closed !== undefined)
      return attempt.fail(new UpstreamFailure('UPSTREAM_DESTROYED', "the worker's connections are closed"));
    const idle = this.#idle.pop();
    if (idle !== undefined) return idle.run(attempt);
    if (this.#live.size < this.#opts.connections) return this.#open().run(attempt);
    attempt.queued = true;
    this.#queue.push(attempt);
  }

  /** A reused connection closed before any byte of its answer: the worker closed it while idle, so the request goes again, once, on a new one. */
  again(attempt: Attempt): void {
    attempt.retried = true;
    this.#open().run(attempt);
  }

  /** A connection finished its response; `reusable` when its framing and the worker allow another. */
  release(c: UpstreamConnection, reusable: boolean, hintMs: number): void {
    const idleMs = hintMs >= 0 ? Math.min(this.#opts.idleTimeoutMs, hintMs - KEEP_ALIVE_MARGIN_MS) : this.#opts.idleTimeoutMs;
    if (!reusable || this.#destroyed || this.#closed !== undefined || idleMs <= 0) {
      c.abandon();
      return;
    }
    const next = this.#queue.shift();
    if (next !== undefined) {
      next.queued = false;
      c.run(next);
      return;
    }
    c.park(idleMs);
    this.#idle.push(c);
  }

  /** A connection is gone (closed by either side): its place goes to a waiting request. */
  lost(c: UpstreamConnection): void {
    if (!this.#live.delete(c)) return;
    const at = this.#idle.lastIndexOf(c);
    if (at >= 0) this.#idle.splice(at, 1);
    if (this.#queue.length > 0 && !this.#destroyed && this.#live.size < this.#opts.connections) {
      const next = this.#queue.shift()!;
      next.queued = false;
      this.#open().run(next);
    }
    if (this.#closed !== undefined && this.#live.size === 0) this.#closed();
  }

  unqueue(attempt: Attempt): void {
    const at = this.#queue.indexOf(attempt);
    if (at >= 0) this.#queue.splice(at, 1);
    attempt.queued = false;
  }

  /** Stop taking requests; resolves when those under way have finished and every connection is closed. */
  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    if (this.#live.size === 0 && this.#queue.length === 0) {
      this.#closed = () => undefined;
      return (this.#closing = Promise.resolve());
    }
    this.#closing = new Promise<void>((resolve) => (this.#closed = resolve));
    for (const c of [...this.#idle]) c.abandon();
    return this.#closing;
  }

  /** Close every connection now; requests under way or waiting fail as the router's own doing. */
  destroy(): Promise<void> {
    this.#destroyed = true;
    const failure = (): UpstreamFailure => new UpstreamFailure('UPSTREAM_DESTROYED', "the router closed the worker's connections");
    for (const a of this.#queue.splice(0)) {
      a.queued = false;
      a.fail(failure());
    }
    for (const c of [...this.#live]) c.destroy(failure());
    this.#closed?.();
    return Promise.resolve();
  }

  #open(): UpstreamConnection {
    const c = new UpstreamConnection(this, this.origin, this.#opts.connectTimeoutMs);
    this.#live.add(c);
    return c;
  }
}

/**
 * The request line and headers, or undefined when a header would break the framing
 * (node's parser never lets a client's header carry CR or LF; this guards the router's own).
 */
function requestHead(origin: Origin, r: UpstreamRequestOptions): string | undefined {
  let head = `POST ${origin.base}${r.path} HTTP/1.1\r\nhost: ${origin.hostHeader}\r\n`;
  for (const name in r.headers) {
    const v = r.headers[name]!;
    if (typeof v === 'string') {
      if (!fieldOk(v)) return undefined;
      head += `${name}: ${v}\r\n`;
    } else
      for (const one of v) {
        if (!fieldOk(one)) return undefined;
        head += `${name}: ${one}\r\n`;
      }
  }
  return `${head}\r\n`;
}

function fieldOk(v: string): boolean {
  return !v.includes('\r') && !v.includes('\n');
}
