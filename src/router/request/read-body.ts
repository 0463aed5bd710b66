import type { IncomingMessage } from 'node:http';
import { ApiErrors } from '../server/api-error.js';

/**
 * Buffer a request body up to `limit` bytes. A declared Content-Length over the
 * limit is refused before reading (413 before parsing); a chunked body is cut off
 * as soon as it passes the limit.
 */
export function readRequestBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(ApiErrors.payloadTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(ApiErrors.payloadTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}
