import type { IncomingMessage } from 'node:http';

/**
 * Buffer a request body, refusing more than `limit` bytes: a declared Content-Length
 * over the limit is refused before a byte is read, a chunked body as soon as it
 * passes the limit. `tooLarge` builds the caller's own error (router envelope or
 * engine shape).
 */
export function readBodyWithLimit(req: IncomingMessage, limit: number, tooLarge: () => Error): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}
