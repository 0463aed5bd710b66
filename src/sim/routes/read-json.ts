import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLargeError, readBody } from '../http/read-body.js';
import { sendError } from '../http/responses.js';
import { parseJsonObject } from './generation-request.js';
import type { RouteContext } from './route-context.js';

/**
 * Read and parse a JSON object body, answering the error itself (413 for an
 * oversized body, then closing the connection so the rest is not read) and
 * returning undefined when it did. Validation errors thrown later are answered by
 * the server's dispatcher.
 */
export async function readJson(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: RouteContext,
  native: boolean,
): Promise<Record<string, unknown> | undefined> {
  let body: Buffer;
  try {
    body = await readBody(req, ctx.maxBodyBytes);
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      sendError(res, ctx.engine.flavor, native, 413, `Request body too large: the limit is ${err.limit} bytes`, {
        connection: 'close',
      });
      res.once('finish', () => req.destroy());
      return undefined;
    }
    throw err;
  }
  return parseJsonObject(body);
}
