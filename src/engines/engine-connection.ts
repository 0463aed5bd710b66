import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { DRAIN_LIMIT, ENGINE_REPLY_MAX_BYTES, formatBytes } from './engine-reply.js';
import type { EngineReply } from './engine-reply.js';

/** The most of a status line and headers read before the reply counts as broken. */
const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const CRLF = Buffer.from('\r\n', 'latin1');
const EMPTY = Buffer.alloc(0);
/** Chunked framing states beside "bytes left in this chunk". */
const SIZE_LINE = -1;
const TRAILERS = -3;

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
    this.exchange = new Exchange(how.settle, how.maxBytes, how.retried, fresh ? false : this.reused, request);
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
    const untilClose = ex.atClose();
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

/** One GET's answer as it arrives: the head, then the body by its framing. */
class Exchange {
  private head: Buffer | undefined = EMPTY;
  private status = 0;
  private keepAlive = true;
  /** Bytes of body still expected (Content-Length), or -1 for chunked, or -2 for until close. */
  private remaining = 0;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  /** Chunked framing: bytes of the current chunk still to read (its CRLF included), or SIZE_LINE, or TRAILERS. */
  private inChunk = SIZE_LINE;
  private pending: Buffer = EMPTY;
  private answered = false;

  constructor(
    readonly settle: (reply: EngineReply) => void,
    readonly maxBytes: number,
    private readonly retried: boolean,
    private readonly onReused: boolean,
    readonly request: Buffer,
  ) {}

  /** A reused connection that broke before any byte of its answer: the engine closed it while idle, so the GET is sent again, once. */
  staleCandidate(): boolean {
    return this.onReused && !this.retried && !this.answered;
  }

  /** The body that runs until the connection closes, complete now. */
  atClose(): EngineReply | undefined {
    if (this.head !== undefined || this.remaining !== -2) return undefined;
    return this.done().reply;
  }

  feed(chunk: Buffer): Step {
    this.answered = true;
    if (this.head !== undefined) {
      const head: Buffer = Buffer.concat([this.head, chunk]);
      const end = head.indexOf(HEAD_END);
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) return broken('a status line and headers longer than 64 KB');
        this.head = head;
        return 'more';
      }
      this.head = undefined;
      const bad = this.readHead(head.toString('latin1', 0, end));
      if (bad !== undefined) return broken(bad);
      if (this.is2xx() && this.remaining > this.maxBytes) return { reply: this.tooLarge(), keepAlive: false };
      if (this.status === 204 || this.status === 304 || this.remaining === 0) return this.done();
      return this.body(head.subarray(end + HEAD_END.length));
    }
    return this.body(chunk);
  }

  private readHead(text: string): string | undefined {
    const lines = text.split('\r\n');
    const m = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0] ?? '');
    if (!m) return 'a reply that is not HTTP/1.x';
    this.status = Number(m[2]);
    this.keepAlive = m[1] === '1';
    let length: number | undefined;
    let chunked = false;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase();
      if (name === 'content-length') {
        if (!/^\d+$/.test(value)) return `a Content-Length of '${value.slice(0, 32)}'`;
        length = Number(value);
      } else if (name === 'transfer-encoding') chunked = value.split(',').some((v) => v.trim() === 'chunked');
      else if (name === 'connection') {
        if (value.split(',').some((v) => v.trim() === 'close')) this.keepAlive = false;
        else if (value.split(',').some((v) => v.trim() === 'keep-alive')) this.keepAlive = true;
      }
    }
    if (this.status >= 100 && this.status < 200) return 'an informational (1xx) reply to a GET';
    this.remaining = chunked ? -1 : (length ?? -2);
    if (this.remaining === -2) this.keepAlive = false;
    return undefined;
  }

  private is2xx(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  private body(data: Buffer): Step {
    if (this.remaining >= 0) {
      const take = Math.min(this.remaining, data.length);
      const kept = this.keep(data.subarray(0, take));
      if (kept !== undefined) return kept;
      this.remaining -= take;
      if (this.remaining === 0) return data.length > take ? broken('bytes past the end of the reply') : this.done();
      return 'more';
    }
    if (this.remaining === -2) return this.keep(data) ?? 'more';
    return this.chunked(data);
  }

  private chunked(data: Buffer): Step {
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, data]) : data;
    this.pending = EMPTY;
    for (;;) {
      if (this.inChunk === TRAILERS) {
        // After the last chunk: trailer lines (ignored) up to an empty one.
        const end = buf.indexOf(CRLF) === 0 ? 0 : buf.indexOf(HEAD_END);
        if (end < 0) {
          if (buf.length > MAX_HEAD_BYTES) return broken('trailers longer than 64 KB');
          this.pending = Buffer.from(buf);
          return 'more';
        }
        return this.done();
      }
      if (this.inChunk === SIZE_LINE) {
        const eol = buf.indexOf(CRLF);
        if (eol < 0) {
          if (buf.length > 1024) return broken('a chunk size line longer than 1 KB');
          this.pending = Buffer.from(buf);
          return 'more';
        }
        const sizeText = buf.toString('latin1', 0, eol).split(';', 1)[0]!.trim();
        if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) return broken(`a chunk size of '${sizeText.slice(0, 16)}'`);
        const size = parseInt(sizeText, 16);
        buf = buf.subarray(eol + 2);
        // A chunk's data, then its CRLF; the last chunk (size 0) is followed by the trailers.
        this.inChunk = size === 0 ? TRAILERS : size + 2;
        continue;
      }
      // Inside a chunk: inChunk bytes left, the last two of them its CRLF.
      const take = Math.min(this.inChunk, buf.length);
      const kept = this.keep(buf.subarray(0, Math.max(0, Math.min(take, this.inChunk - 2))));
      if (kept !== undefined) return kept;
      this.inChunk -= take;
      buf = buf.subarray(take);
      if (this.inChunk > 0) return 'more';
      this.inChunk = SIZE_LINE;
      if (buf.length === 0) return 'more';
    }
  }

  /** Keep body bytes within the caps: a 2xx up to maxBytes, anything else drained up to DRAIN_LIMIT. */
  private keep(data: Buffer): Step | undefined {
    if (data.length === 0) return undefined;
    this.size += data.length;
    if (!this.is2xx()) return this.size > DRAIN_LIMIT ? { reply: { kind: 'status', status: this.status }, keepAlive: false } : undefined;
    if (this.size > this.maxBytes) return { reply: this.tooLarge(), keepAlive: false };
    this.chunks.push(data);
    return undefined;
  }

  private tooLarge(): EngineReply {
    return { kind: 'error', reason: 'too_large', detail: `reply larger than ${formatBytes(this.maxBytes)}` };
  }

  private done(): { reply: EngineReply; keepAlive: boolean } {
    if (!this.is2xx()) return { reply: { kind: 'status', status: this.status }, keepAlive: this.keepAlive };
    const text = this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks, this.size).toString('utf8');
    return { reply: { kind: 'ok', status: this.status, text }, keepAlive: this.keepAlive };
  }
}

/** A reply whose framing cannot be read: the engine answered, unusably; the connection is closed. */
function broken(why: string): Step {
  return { reply: { kind: 'error', reason: 'connect', detail: `malformed reply: ${why}` }, keepAlive: false };
}
