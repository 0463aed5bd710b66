import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, ApiErrors, sendApiError } from '../api-error/api-error.js';
import type { Logger } from '../logging/logger.js';
import type { RouterMetrics } from '../metrics/index.js';
import { authorizeAdmin } from './admin-api.js';
import { ANY_ALLOW, answerOptions } from './http-edge.js';
import { allowOf, type Route } from './routes.js';

export interface HttpFrontDeps {
  readonly routes: ReadonlyMap<string, Route>;
  readonly metrics: RouterMetrics;
  readonly log: Logger;
  readonly ready: () => boolean;
  /** Digest of --admin-token (admin-api.ts tokenDigest); undefined: /admin/* is open. */
  readonly adminTokenDigest: Buffer | undefined;
}

/**
 * The HTTP front: each request is looked up in the route table by path, refused by
 * method or admin token, handed to its route's handler, and any refusal turned into
 * the error envelope (docs/http-edge.md). Generation routes are counted here, request
 * and response, whatever the answer.
 */
export class HttpFront {
  constructor(private readonly d: HttpFrontDeps) {}

  async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const d = this.d;
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const method = req.method ?? 'GET';
    const route = d.routes.get(path);
    const counted = route?.generation !== undefined;
    // Draining: every answer closes its connection, so the client's next one goes elsewhere.
    if (!d.ready()) res.setHeader('connection', 'close');
    try {
      if (route === undefined) {
        if (path === '*' && method === 'OPTIONS') return answerOptions(res, ANY_ALLOW);
        throw ApiErrors.notFound();
      }
      if (counted) d.metrics.requests.inc([path, method]);
      if (method === 'OPTIONS') answerOptions(res, allowOf(route));
      else {
        if (!(route.methods as readonly string[]).includes(method)) throw ApiErrors.methodNotAllowed(allowOf(route));
        if (route.auth === 'admin') authorizeAdmin(req, d.adminTokenDigest);
        await route.handler(req, res, path);
      }
      if (counted) d.metrics.responses.inc([path, method, String(res.statusCode)]);
    } catch (err) {
      const apiErr = err instanceof ApiError ? err : ApiErrors.internal();
      if (!(err instanceof ApiError)) d.log.error('unexpected error handling a request', { path, error: (err as Error)?.message });
      sendApiError(res, apiErr);
      if (counted) d.metrics.responses.inc([path, method, String(apiErr.status)]);
      // Refused before its body was read (413, 415, shutting down): that body will not be read.
      if (apiErr.headers.connection === 'close' && !req.complete) res.once('finish', () => req.destroy());
    }
  }
}
