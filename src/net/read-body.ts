import type { IncomingMessage } from 'node:http';

/**
 * Buffer a request body, refusing more than `limit` bytes: a declared Content-Length
 * over the limit is refused before a byte is read, a chunked body as soon as it
 * passes the limit. `tooLarge` builds the caller's own error (router envelope or
 * engine shape); `incomplete`, when given, the error for a client that closed the
 * connection before the body ended (otherwise node's own error is passed on).
 */
export async function readBodyWithLimit(
  req: IncomingMessage,
  limit: number,
  tooLarge: () => Error,
  incomplete?: () => Error,
): Promise<Buffer> {
  const { chunks, length } = await readBodyChunks(req, limit, tooLarge, incomplete);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
}

/** A request body as it arrived: the socket's chunks, not copied into one buffer. */
export interface BodyChunks {
  readonly chunks: readonly Buffer[];
  /** Bytes in all chunks. */
  readonly length: number;
}

/**
 * readBodyWithLimit without the final copy: a long body stays in the chunks node read
 * it in. Joining them would allocate the whole body once more, which for a body of
 * hundreds of kilobytes costs more than everything else the router does with it.
 */
export function readBodyChunks(req: IncomingMessage, limit: number, tooLarge: () => Error, incomplete?: () => Error): Promise<BodyChunks> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (err: Error | undefined): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('close', onClose);
      if (err) reject(err);
      else resolve({ chunks, length: size });
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        settle(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    // A client that aborts its upload: 'error' (ECONNRESET, "aborted"), or only 'close'.
    const onClose = (): void => {
      if (!req.complete) settle(incomplete?.() ?? new Error('request aborted'));
    };
    req.on('data', onData);
    req.once('end', () => settle(undefined));
    req.on('error', (err) => settle(incomplete?.() ?? err));
    req.on('close', onClose);
  });
}
