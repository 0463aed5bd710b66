import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

/** One request as a raw server read it: its head, its body by Content-Length, and where it came. */
export interface RawRequest {
  /** The connection it came on, counted from 0 in order of arrival. */
  readonly conn: number;
  /** Its place among the requests of that connection, from 0. */
  readonly n: number;
  readonly head: string;
  readonly body: string;
  /** The socket to answer on, in exact bytes. */
  readonly socket: Socket;
}

export interface RawServer {
  readonly url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Every request read, in order. */
  readonly requests: RawRequest[];
  /** Stop listening and drop every connection. */
  close(): Promise<void>;
}

/**
 * An HTTP/1.1 server written from the wire, for what node:http would never send:
 * exact framing, a close instead of an answer, bytes past an answer. It reads request
 * heads and Content-Length bodies and leaves every byte of the answer to `reply`.
 */
export async function rawHttpServer(reply: (r: RawRequest) => void): Promise<RawServer> {
  let connections = 0;
  const requests: RawRequest[] = [];
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    const conn = connections++;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
    let n = 0;
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.slice(0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const r: RawRequest = { conn, n: n++, head, body: buf.slice(end + 4, end + 4 + length), socket };
        buf = buf.slice(end + 4 + length);
        requests.push(r);
        reply(r);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}
