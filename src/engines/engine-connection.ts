import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { DRAIN_LIMIT, ENGINE_REPLY_MAX_BYTES, formatBytes } from './engine-reply.js';
import type { EngineReply } from './engine-reply.js';
import { ResponseParser } from '../net/index.js';
import type { ResponseSink } from '../net/index.js';

/**
 * One keep-alive HTTP/1.1 connection to one engine, for the small GETs the load
 * sampler sends a thousand times a second across a large fleet. It reads the status
 * line, Content-Length or chunked framing, and nothing else of the headers.
 *
 * Why not undici here (it serves every other engine request): a connected, idle
 * undici client per worker made the young generation's survivors grow with the fleet.
 * In isolation, 4,088 idle undici connections raised what each scavenge promotes from
 * 2 KB to 1 MB and its pause from 1 to 4-9 ms, where as many idle plain sockets that had
 * answered a GET cost nothing (BENCHMARKS.md, section 15). A poll is one GET at a time
 * per worker, so the whole client is this file.
 *
 * Never throws: every way of not getting a usable reply is an EngineReply, with the
 * causes and wording of getEngineReply (docs/engine-load.md §Poll failures).
 */
export class EngineConnection {
  private socket: Socket | undefined;
  /** The socket has answered before: a failure before any byte of the next answer may be the engine closing an idle connection. */
  private reused = false;
  private exchange: Exchange | undefined;
  private readonly parser = new ResponseParser(false);
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  /** The worker URL's own path, which every GET's path follows (`http://host/engine-1` + `/v1/loads`). */
  private readonly base: string;

  /** `worker`: an http: worker URL (the sampler sends https: workers through undici). */
  constructor(worker: URL) {
    this.host = worker.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(worker.port || 80);
    this.hostHeader = worker.host;
    this.base = worker.pathname.replace(/\/+$/, '');
  }

  /** GET `path`; one at a time (the sampler never polls a worker whose last poll is still out). */
  get(path: string, timeoutMs: number, maxBytes: number = ENGINE_REPLY_MAX_BYTES): Promise<EngineReply> {
    return new Promise<EngineReply>((resolve) => {
      const request = Buffer.from(`GET ${this.base}${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n\r\n`, 'latin1');
      const timer = setTimeout(
        () => this.fail({ kind: 'error', reason: 'timeout', detail: `no answer within ${timeoutMs} ms` }),
        timeoutMs,
      );
      const settle = (reply: EngineReply): void => {
        clearTimeout(timer);
        resolve(reply);
      };
      this.send(request, { settle, maxBytes, retried: false });
    });
  }

  /** Close the connection; an exchange in progress settles as a refused connection. */
  close(): void {
    this.fail({ kind: 'error', reason: 'connect', detail: 'connection closed by the router' });
  }

  private send(request: Buffer, how: { settle: (reply: EngineReply) => void; maxBytes: number; retried: boolean }): void {
    const fresh = this.socket === undefined || this.socket.destroyed;
    if (fresh) this.open();
    this.exchange = new Exchange(this.parser, how.settle, how.maxBytes, how.retried, fresh ? false : this.reused, request);
    this.socket!.write(request);
  }

  private open(): void {
    this.reused = false;
    const socket = connect({ host: this.host, port: this.port, noDelay: true });
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      if (this.socket !== socket) return;
      const ex = this.exchange;
      if (ex === undefined) {
        // Bytes nobody asked for: the connection's framing is lost.
        socket.destroy();
        return;
      }
      const step = ex.feed(chunk);
      if (step === 'more') return;
      this.exchange = undefined;
      if (step.keepAlive) this.reused = true;
      else this.drop(socket);
      ex.settle(step.reply);
    });
    socket.on('end', () => this.ended(socket, undefined));
    socket.on('error', (err) => this.ended(socket, err));
    socket.on('close', () => this.ended(socket, undefined));
  }

  /** The socket ended or broke: the exchange on it settles, or runs again on a new connection when a reused one was closed under it. */
  private ended(socket: Socket, err: Error | undefined): void {
    if (this.socket !== socket) return;
    this.drop(socket);
    const ex = this.exchange;
    if (ex === undefined) return;
    this.exchange = undefined;
    // Only a clean close ends a body framed by the close; a reset cuts it.
    const untilClose = err === undefined ? ex.atClose() : undefined;
    if (untilClose !== undefined) return ex.settle(untilClose);
    if (ex.staleCandidate()) return this.send(ex.request, { settle: ex.settle, maxBytes: ex.maxBytes, retried: true });
    const code = (err as { code?: string } | undefined)?.code;
    const message = err?.message ? err.message.split('\n')[0]! : (code ?? 'the engine closed the connection before answering');
    ex.settle({ kind: 'error', reason: 'connect', detail: message });
  }

  private fail(reply: EngineReply): void {
    const ex = this.exchange;
    this.exchange = undefined;
    if (this.socket) this.drop(this.socket);
    ex?.settle(reply);
  }

  private drop(socket: Socket): void {
    if (this.socket === socket) this.socket = undefined;
    socket.destroy();
  }
}

type Step = 'more' | { reply: EngineReply; keepAlive: boolean };

/** One GET's answer as it arrives, read by the connection's parser, kept within the caps. */
class Exchange implements ResponseSink {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  /** Why the sink stopped the read. */
  private stopped: Step = 'more';

  constructor(
    private readonly parser: ResponseParser,
    readonly settle: (reply: EngineReply) => void,
    readonly maxBytes: number,
    private readonly retried: boolean,
    private readonly onReused: boolean,
    readonly request: Buffer,
  ) {
    parser.reset();
  }

  /** A reused connection that broke before any byte of its answer: the engine closed it while idle, so the GET is sent again, once. */
  staleCandidate(): boolean {
    return this.onReused && !this.retried && !this.parser.started;
  }

  /** The body that runs until the connection closes, complete now. */
  atClose(): EngineReply | undefined {
    return this.parser.closed() ? this.done().reply : undefined;
  }

  feed(chunk: Buffer): Step {
    const step = this.parser.feed(chunk, this);
    if (step === 'more') return 'more';
    if (step === 'stopped') return this.stopped;
    if (step === 'done') return this.parser.trailing ? broken('bytes past the end of the reply') : this.done();
    return broken(step);
  }

  head(p: ResponseParser): boolean {
    if (p.status < 200) this.stopped = broken('an informational (1xx) reply to a GET');
    else if (this.is2xx() && p.contentLength > this.maxBytes) this.stopped = { reply: this.tooLarge(), keepAlive: false };
    return this.stopped === 'more';
  }

  body(chunk: Buffer): boolean {
    this.stopped = this.keep(chunk) ?? 'more';
    return this.stopped === 'more';
  }

  private is2xx(): boolean {
    return this.parser.status >= 200 && this.parser.status < 300;
  }

  /** Keep body bytes within the caps: a 2xx up to maxBytes, anything else drained up to DRAIN_LIMIT. */
  private keep(data: Buffer): Step | undefined {
    if (data.length === 0) return undefined;
    this.size += data.length;
    if (!this.is2xx())
      return this.size > DRAIN_LIMIT ? { reply: { kind: 'status', status: this.parser.status }, keepAlive: false } : undefined;
    if (this.size > this.maxBytes) return { reply: this.tooLarge(), keepAlive: false };
    this.chunks.push(data);
    return undefined;
  }

  private tooLarge(): EngineReply {
    return { kind: 'error', reason: 'too_large', detail: `reply larger than ${formatBytes(this.maxBytes)}` };
  }

  private done(): { reply: EngineReply; keepAlive: boolean } {
    const { status, keepAlive } = this.parser;
    if (!this.is2xx()) return { reply: { kind: 'status', status }, keepAlive };
    const text = this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks, this.size).toString('utf8');
    return { reply: { kind: 'ok', status, text }, keepAlive };
  }
}

/** A reply whose framing cannot be read: the engine answered, unusably; the connection is closed. */
function broken(why: string): Step {
  return { reply: { kind: 'error', reason: 'connect', detail: `malformed reply: ${why}` }, keepAlive: false };
}
