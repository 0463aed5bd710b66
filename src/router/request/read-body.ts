import type { IncomingMessage } from 'node:http';
import { readBodyWithLimit } from '../../net/index.js';
import { ApiErrors } from '../server/api-error.js';

/** The request body, or a 413 in the router's envelope (before any parsing). */
export function readRequestBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return readBodyWithLimit(req, limit, () => ApiErrors.payloadTooLarge(limit));
}
