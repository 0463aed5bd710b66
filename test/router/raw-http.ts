import { connect } from 'node:net';
import type { Socket } from 'node:net';

/** What came back on a raw connection: the bytes, and whether the server closed it. */
export interface RawExchange {
  text: string;
  status: number | undefined;
  closedByServer: boolean;
  /** The parsed JSON body, when the response has one. */
  json(): unknown;
}

/**
 * Send bytes on a fresh TCP connection (in pieces, with pauses, when `chunks` is an
 * array of [bytes, delayMs]) and collect the answer until the server closes or
 * `waitMs` passes. For what no HTTP client will send: broken request lines, header
 * overflows, slow headers, aborted uploads.
 */
export function rawExchange(
  url: string,
  chunks: string | Buffer | Array<[string | Buffer, number]>,
  opts: { waitMs?: number; endAfter?: boolean; destroyAfter?: boolean } = {},
): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), hostname);
    const got: Buffer[] = [];
    let closedByServer = false;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(got).toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({
        text,
        status: m ? Number(m[1]) : undefined,
        closedByServer,
        json: () => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)),
      });
    };
    const timer = setTimeout(finish, opts.waitMs ?? 3000);
    socket.on('data', (c: Buffer) => got.push(c));
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('error', () => {
      closedByServer = true;
      finish();
    });
    socket.on('connect', async () => {
      const list: Array<[string | Buffer, number]> = Array.isArray(chunks) ? chunks : [[chunks, 0]];
      for (const [bytes, delay] of list) {
        if (done || socket.destroyed) return;
        socket.write(bytes);
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      }
      if (opts.destroyAfter) {
        // The client aborts: no FIN, the connection is simply gone.
        socket.resetAndDestroy();
        finish();
      } else if (opts.endAfter) socket.end();
    });
  });
}

/** A request head with the given lines. */
export const head = (requestLine: string, headers: Record<string, string> = {}): string =>
  `${requestLine}\r\nhost: router\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
