import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** What to answer on the raw socket for a protocol-level error (no request object exists). */
export interface RawErrorResponse {
  headers: Record<string, string>;
  body: string;
}

export interface TrackedServerOptions {
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** The request line and headers must arrive within this, else 408 (node's headersTimeout; capped by requestTimeoutMs). */
  headersTimeoutMs?: number;
  /** The whole request, body included, must arrive within this, else 408 (node's requestTimeout). */
  requestTimeoutMs?: number;
  /** Connections open at once; more are closed on arrival (node's maxConnections). */
  maxConnections?: number;
  /** Headers and body of a protocol-level error answer, by status; plain text when absent. */
  clientErrorResponse?: (status: ClientErrorStatus) => RawErrorResponse;
}

export type ClientErrorStatus = 400 | 405 | 408 | 413 | 431;

const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_CONNECTIONS = 4096;

const REASONS: Record<ClientErrorStatus, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/**
 * The status for a parser or timeout error reported by node:http's 'clientError', or
 * undefined when the client is gone and there is nobody to answer (docs/http-edge.md).
 */
export function clientErrorStatus(code: string | undefined): ClientErrorStatus | undefined {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ERR_STREAM_DESTROYED':
    case 'ERR_STREAM_WRITE_AFTER_END':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    default:
      return 400;
  }
}

/**
 * How often node checks the header and request timeouts: every second, or every
 * quarter of the shorter timeout when that is under 4 s (at least 50 ms).
 */
export function checkingIntervalMs(headersTimeoutMs: number, requestTimeoutMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(headersTimeoutMs, requestTimeoutMs) / 4)));
}

/**
 * A node:http server with its edge settled in one place: it knows its open sockets
 * (so shutdown can end idle keep-alive connections and cut stragglers), reaps clients
 * that are slow to send headers or a body (408), caps open connections, and answers
 * a protocol error (bad request line, header overflow, timeout, an HTTP/1.1 request
 * without Host, CONNECT) with its own status and the caller's body instead of
 * node's bare answer or a silent close. An `Expect` other than 100-continue is
 * ignored rather than refused with a bare 417; an `Upgrade` is answered as plain
 * HTTP/1.1 and the connection closed after it.
 */
/** Listen on `host:port`; resolves with the address bound (port 0 picks one), rejects with the listen error. */
export function listenOn(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** The http:// URL of a bound address (IPv6 in brackets). */
export function urlOf(address: AddressInfo): string {
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

export function createTrackedServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  options: number | TrackedServerOptions,
): { server: Server; sockets: Set<Socket> } {
  const o: TrackedServerOptions = typeof options === 'number' ? { keepAliveTimeoutMs: options } : options;
  const requestTimeout = Math.max(1, Math.round(o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS));
  // node refuses a header timeout longer than the request timeout.
  const headersTimeout = Math.max(1, Math.min(requestTimeout, Math.round(o.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS)));
  const sockets = new Set<Socket>();
  const answer = (status: ClientErrorStatus): { head: string; body: string; headers: Record<string, string> } => {
    const { headers, body } = o.clientErrorResponse?.(status) ?? {
      headers: { 'content-type': 'text/plain' },
      body: `${REASONS[status]}\n`,
    };
    const all = { ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
    let head = `HTTP/1.1 ${status} ${REASONS[status]}\r\n`;
    for (const [k, v] of Object.entries(all)) head += `${k}: ${v}\r\n`;
    return { head, body, headers: all };
  };
  // node's own check answers a bare 400; this one answers in the caller's shape.
  const checked = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      const { headers, body } = answer(400);
      res.writeHead(400, headers).end(body);
      return;
    }
    // An Upgrade is never taken (the request is served as plain HTTP/1.1), but node's
    // parser stops at it: bytes pipelined behind it would never be read. Close after it.
    if (req.headers.upgrade !== undefined) res.setHeader('connection', 'close');
    handler(req, res);
  };
  const server = createServer(
    {
      headersTimeout,
      requestTimeout,
      connectionsCheckingInterval: checkingIntervalMs(headersTimeout, requestTimeout),
      requireHostHeader: false,
    },
    checked,
  );
  server.on('checkExpectation', checked);
  // CONNECT: no tunnels here. Without a listener node would close the socket unanswered.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const { head, body } = answer(405);
    if (socket.writable) socket.end(`${head}\r\n${body}`, () => socket.destroy());
    else socket.destroy();
  });
  server.keepAliveTimeout = o.keepAliveTimeoutMs;
  server.maxConnections = o.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const status = clientErrorStatus(err.code);
    // A response already under way on this socket cannot be followed by another one.
    const responding = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (status === undefined || !socket.writable || responding) {
      socket.destroy();
      return;
    }
    const { head, body } = answer(status);
    // Once the answer is flushed the connection is done: a client still sending is not waited for.
    socket.end(`${head}\r\n${body}`, () => socket.destroy());
  });
  return { server, sockets };
}
