import type { IncomingMessage } from 'node:http';
import { readBodyChunks } from '../../net/index.js';
import type { BodyChunks } from '../../net/index.js';
import { ApiErrors } from '../api-error/api-error.js';

/**
 * The request body, or an error in the router's envelope before any parsing: 413 over
 * the limit, 400 when the client closed the connection before the body ended (an
 * aborted upload is the client's doing: never a 500, never an error log).
 */
export function readRequestBody(req: IncomingMessage, limit: number): Promise<BodyChunks> {
  return readBodyChunks(req, limit, () => ApiErrors.payloadTooLarge(limit), ApiErrors.bodyIncomplete);
}
