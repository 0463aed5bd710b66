/** The most of a status line and headers (or of trailers) read before a response counts as broken. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** The longest chunk-size line (with its extensions) accepted. */
const MAX_CHUNK_LINE = 1024;

const CR = 0x0d;
const LF = 0x0a;
const EMPTY = Buffer.alloc(0);
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?:[ \t]|$)/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Bytes no field value may hold (RFC 9110 section 5.5): controls other than HTAB, and DEL. */
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
const KEEP_ALIVE_TIMEOUT = /(?:^|[,;\s])timeout\s*=\s*(\d+)/i;

/** Where a response is. */
const enum State {
  Head,
  /** A body of known length: `left` bytes to come. */
  Length,
  ChunkSize,
  /** Inside a chunk: `left` bytes of data, then its CRLF. */
  ChunkData,
  ChunkEnd,
  Trailers,
  /** A body that runs until the connection closes. */
  UntilClose,
  Done,
}

/** What the parser hands on as it reads; `false` from either stops the read there. */
export interface ResponseSink {
  /** A status line and headers. Below 200 another head follows (an informational answer). */
  head(parser: ResponseParser): boolean;
  body(chunk: Buffer): boolean;
}

/**
 * `more`: the response needs more bytes. `done`: it is complete (`trailing` says
 * whether bytes followed it). `stopped`: the sink said stop. A string: why the bytes
 * are not an HTTP/1.x response.
 */
export type ParseStep = 'more' | 'done' | 'stopped' | string;

/**
 * An incremental HTTP/1.1 response reader for routerctl's own clients: the proxy's
 * connections to workers and the load sampler's polls (docs/http-edge.md §Relay). It
 * reads the status line, the headers (kept only when asked for), and the framing the
 * RFC 9112 section 6.3 order gives: no body for 1xx, 204 and 304; chunked when the last
 * transfer coding says so; else Content-Length; else until the connection closes.
 * Body bytes go to the sink as slices of what arrived, never copied or joined.
 *
 * One parser serves one connection: `reset()` before each response. Nothing of a
 * response outlives its `reset()`, so an idle connection holds no garbage of its last
 * answer for the collector to promote.
 */
export class ResponseParser {
  status = 0;
  /** The connection may carry another request after this response. */
  keepAlive = true;
  /** The headers, lower-cased, a repeated one as an array; only when the parser collects them. */
  headers: Record<string, string | string[]> | undefined;
  /** The body's length by Content-Length, or -1. */
  contentLength = -1;
  /** Chunked framing. */
  chunked = false;
  /** What the server's `Keep-Alive: timeout=N` says, in ms, or -1. */
  keepAliveHintMs = -1;
  /** Bytes followed the complete response (with no pipelining, a broken server). */
  trailing = false;
  /** Any byte of this response has arrived. */
  started = false;

  #state = State.Head;
  #left = 0;
  #pending: Buffer = EMPTY;

  /** `collectHeaders`: keep every header (the proxy relays them); else only the framing is read (polls). */
  constructor(private readonly collectHeaders: boolean) {}

  reset(): void {
    this.status = 0;
    this.keepAlive = true;
    this.headers = undefined;
    this.contentLength = -1;
    this.chunked = false;
    this.keepAliveHintMs = -1;
    this.trailing = false;
    this.started = false;
    this.#state = State.Head;
    this.#left = 0;
    this.#pending = EMPTY;
  }

  get complete(): boolean {
    return this.#state === State.Done;
  }

  /** Whether the head has been read (the body, if any, is under way). */
  get inBody(): boolean {
    return this.#state !== State.Head && this.#state !== State.Done;
  }

  /** The connection closed: true when that completes the response (a body that runs until close). */
  closed(): boolean {
    if (this.#state !== State.UntilClose) return this.#state === State.Done;
    this.#state = State.Done;
    return true;
  }

  feed(data: Buffer, sink: ResponseSink): ParseStep {
    if (data.length > 0) this.started = true;
    let buf = data;
    if (this.#pending.length > 0) {
      buf = Buffer.concat([this.#pending, data]);
      this.#pending = EMPTY;
    }
    let at = 0;
    while (at < buf.length || this.#state === State.Done) {
      switch (this.#state) {
        case State.Done:
          this.trailing = at < buf.length;
          return 'done';
        case State.Head: {
          const end = headEnd(buf, at);
          if (end < 0) {
            if (buf.length - at > MAX_HEAD_BYTES) return 'a status line and headers longer than 64 KB';
            // A head with bare LF line ends would wait for a CRLF CRLF that never comes.
            if (hasBareLf(buf, at)) return 'a status line or header ended by a bare LF';
            this.#pending = Buffer.from(buf.subarray(at));
            return 'more';
          }
          // However it arrived: in one write or in many, the limit is the same.
          if (end - at > MAX_HEAD_BYTES) return 'a status line and headers longer than 64 KB';
          const bad = this.#readHead(buf.toString('latin1', at, end));
          if (bad !== undefined) return bad;
          at = end + 4;
          if (!sink.head(this)) return 'stopped';
          if (this.status < 200) {
            // An informational answer: the real one follows on the same connection.
            const keepAlive = this.keepAlive;
            this.reset();
            this.started = true;
            this.keepAlive = keepAlive;
          }
          continue;
        }
        case State.Length: {
          const take = Math.min(this.#left, buf.length - at);
          this.#left -= take;
          const slice = at === 0 && take === buf.length ? buf : buf.subarray(at, at + take);
          at += take;
          if (this.#left === 0) this.#state = State.Done;
          if (!sink.body(slice)) return 'stopped';
          continue;
        }
        case State.UntilClose: {
          const slice = at === 0 ? buf : buf.subarray(at);
          at = buf.length;
          if (!sink.body(slice)) return 'stopped';
          continue;
        }
        case State.ChunkSize: {
          const eol = buf.indexOf(LF, at);
          if (eol < 0 || eol - at > MAX_CHUNK_LINE) {
            if (eol >= 0 || buf.length - at > MAX_CHUNK_LINE) return 'a chunk size line longer than 1 KB';
            this.#pending = Buffer.from(buf.subarray(at));
            return 'more';
          }
          if (eol === at || buf[eol - 1] !== CR) return 'a chunk size line not ended by CRLF';
          const line = buf.toString('latin1', at, eol - 1);
          const semi = line.indexOf(';');
          const sizeText = (semi < 0 ? line : line.slice(0, semi)).trimEnd();
          if (!/^0*[0-9a-fA-F]{1,8}$/.test(sizeText)) return `a chunk size of '${sizeText.slice(0, 16)}'`;
          const size = parseInt(sizeText, 16);
          at = eol + 1;
          if (size === 0) this.#state = State.Trailers;
          else {
            this.#left = size;
            this.#state = State.ChunkData;
          }
          continue;
        }
        case State.ChunkData: {
          const take = Math.min(this.#left, buf.length - at);
          this.#left -= take;
          const slice = buf.subarray(at, at + take);
          at += take;
          if (this.#left === 0) this.#state = State.ChunkEnd;
          if (!sink.body(slice)) return 'stopped';
          continue;
        }
        case State.ChunkEnd: {
          if (buf.length - at < 2) {
            this.#pending = Buffer.from(buf.subarray(at));
            return 'more';
          }
          if (buf[at] !== CR || buf[at + 1] !== LF) return 'a chunk not followed by CRLF';
          at += 2;
          this.#state = State.ChunkSize;
          continue;
        }
        case State.Trailers: {
          // Trailer fields (not relayed) up to an empty line.
          if (buf.length - at >= 2 && buf[at] === CR && buf[at + 1] === LF) {
            at += 2;
            this.#state = State.Done;
            continue;
          }
          const end = headEnd(buf, at);
          if (end < 0) {
            if (buf.length - at > MAX_HEAD_BYTES) return 'trailers longer than 64 KB';
            if (hasBareLf(buf, at)) return 'a trailer ended by a bare LF';
            this.#pending = Buffer.from(buf.subarray(at));
            return 'more';
          }
          at = end + 4;
          this.#state = State.Done;
          continue;
        }
      }
    }
    return 'more';
  }

  /** The status line and header fields; the framing they give, or why they are not HTTP. */
  #readHead(text: string): string | undefined {
    const lines = text.split('\r\n');
    const m = STATUS_LINE.exec(lines[0]!);
    if (!m) return 'a reply that is not HTTP/1.x';
    this.status = Number(m[2]);
    // Its clients never ask to upgrade: past a 101 the bytes are another protocol's, and
    // whatever follows is no answer to the request (RFC 9110 section 15.2.2).
    if (this.status === 101) return 'a 101 Switching Protocols it did not ask for';
    this.keepAlive = m[1] === '1';
    let length = -1;
    let codings: string | undefined;
    let connection: string | undefined;
    const headers: Record<string, string | string[]> | undefined = this.collectHeaders ? {} : undefined;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      // No obsolete line folding, no bare LF, no space before the colon (RFC 9112 section 5).
      if (colon <= 0 || line.includes('\n') || line.includes('\r')) return `a header line '${line.slice(0, 32)}'`;
      const name = line.slice(0, colon).toLowerCase();
      if (!TOKEN.test(name)) return `a header name '${name.slice(0, 32)}'`;
      const value = line.slice(colon + 1).trim();
      if (BAD_VALUE.test(value)) return `a control character in the value of '${name.slice(0, 32)}'`;
      if (headers !== undefined) {
        const had = headers[name];
        headers[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
      }
      switch (name) {
        case 'content-length': {
          // A list of one repeated value is that value (RFC 9110 section 8.6); differing ones are an attack or a bug.
          for (const v of value.split(',')) {
            const t = v.trim();
            if (!/^\d{1,15}$/.test(t)) return `a Content-Length of '${value.slice(0, 32)}'`;
            if (length >= 0 && Number(t) !== length) return 'two different Content-Lengths';
            length = Number(t);
          }
          break;
        }
        case 'transfer-encoding':
          codings = codings === undefined ? value : `${codings},${value}`;
          break;
        case 'connection':
          connection = connection === undefined ? value : `${connection},${value}`;
          break;
        case 'keep-alive': {
          const t = KEEP_ALIVE_TIMEOUT.exec(value);
          if (t) this.keepAliveHintMs = Number(t[1]) * 1000;
          break;
        }
      }
    }
    // One length, as a number: a repeated or listed one relayed as it came would be two header lines to the client.
    if (headers !== undefined && length >= 0) headers['content-length'] = String(length);
    this.headers = headers;
    if (connection !== undefined) {
      const tokens = connection.toLowerCase().split(',');
      if (tokens.some((t) => t.trim() === 'close')) this.keepAlive = false;
      else if (tokens.some((t) => t.trim() === 'keep-alive')) this.keepAlive = true;
    }
    if (this.status < 200 || this.status === 204 || this.status === 304) {
      this.#state = State.Done;
      return undefined;
    }
    if (codings !== undefined) {
      const last = codings.split(',').pop()!.trim().toLowerCase();
      this.chunked = last === 'chunked';
      // Transfer-Encoding overrides a Content-Length, and a message that had both must not
      // leave the connection usable (RFC 9112 section 6.3): the framing was in doubt.
      if (length >= 0) this.keepAlive = false;
      if (!this.chunked) {
        this.keepAlive = false;
        this.#state = State.UntilClose;
        return undefined;
      }
      this.#state = State.ChunkSize;
      return undefined;
    }
    this.contentLength = length;
    if (length === 0) this.#state = State.Done;
    else if (length > 0) {
      this.#left = length;
      this.#state = State.Length;
    } else {
      this.keepAlive = false;
      this.#state = State.UntilClose;
    }
    return undefined;
  }
}

/** Whether the bytes from `from` hold an LF with no CR before it. */
function hasBareLf(buf: Buffer, from: number): boolean {
  for (let i = buf.indexOf(LF, from); i >= 0; i = buf.indexOf(LF, i + 1)) if (i === from || buf[i - 1] !== CR) return true;
  return false;
}

/** Where the empty line ending a head is (its CRLF CRLF), from `from`, or -1. */
function headEnd(buf: Buffer, from: number): number {
  return buf.indexOf('\r\n\r\n', from, 'latin1');
}
