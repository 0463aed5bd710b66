import type { ServerResponse } from 'node:http';
import type { RouterConfig } from '../../config/index.js';
import type { TrackedServerOptions } from '../../net/index.js';
import { protocolErrorResponse } from '../api-error/api-error.js';

/**
 * Longer than the usual 60 s idle timeout of load balancers in front of the router, so
 * the balancer, not the router, closes an idle connection (no race on a reused one).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** The router's HTTP edge settings (docs/http-edge.md, "Limits and timeouts"). */
export function httpEdgeOptions(c: RouterConfig): TrackedServerOptions {
  return {
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
    headersTimeoutMs: c.clientHeaderTimeoutSecs * 1000,
    requestTimeoutMs: c.clientRequestTimeoutSecs * 1000,
    maxConnections: c.maxConnections,
    clientErrorResponse: protocolErrorResponse,
  };
}

/** `Allow` of `OPTIONS *`: every method some route takes (a route's own is `allowOf` in routes.ts). */
export const ANY_ALLOW = 'GET, HEAD, POST, OPTIONS';

/** OPTIONS: 204 with the methods the route takes. No CORS headers: browsers keep cross-site pages out. */
export function answerOptions(res: ServerResponse, allow: string): void {
  res.writeHead(204, { allow });
  res.end();
}
