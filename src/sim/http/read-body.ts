import type { IncomingMessage } from 'node:http';
import { readBodyWithLimit } from '../../net/index.js';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/** The request body, or a BodyTooLargeError the route answers in the engine's shape. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return readBodyWithLimit(req, limit, () => new BodyTooLargeError(limit));
}
