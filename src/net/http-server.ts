import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A node:http server that knows its open sockets (so close() can end idle
 * keep-alive connections and stragglers) and answers a malformed request line with
 * a 400 instead of letting it reach the process.
 */
export function createTrackedServer(handler: (req: IncomingMessage, res: ServerResponse) => void, keepAliveTimeoutMs: number): { server: Server; sockets: Set<Socket> } {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  return { server, sockets };
}
