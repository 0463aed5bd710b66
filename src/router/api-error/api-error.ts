import type { ServerResponse } from 'node:http';
import type { ClientErrorStatus, RawErrorResponse } from '../../net/index.js';
import { errorCatalogue } from '../../errors/index.js';
import type { ApiErrorEntry } from '../../errors/index.js';

/**
 * Every code the router answers with, and its status, in the shape every catalogue
 * shares (src/errors/error-entry.ts): the catalogue that
 * man/routerctl-serve.1 (ERRORS) and docs/http-edge.md list, kept in step by
 * test/router/http-edge.test.ts. A code is part of the HTTP contract: add, never rename.
 * `ApiError` takes only these, so a new code cannot be sent before it is listed here.
 */
export const API_ERROR_CODES = errorCatalogue({
  bad_request: {
    code: 'bad_request',
    status: 400,
    meaning: 'malformed request line or headers, invalid JSON or fields, a body cut short, a bad query parameter',
  },
  unauthorized: { code: 'unauthorized', status: 401, meaning: 'missing or wrong bearer token on /admin/* (with --admin-token)' },
  admin_token_required: {
    code: 'admin_token_required',
    status: 403,
    meaning: 'a change of membership (/admin/workers) on a router started without --admin-token, whatever the host',
  },
  not_found: { code: 'not_found', status: 404, meaning: 'no such route' },
  model_not_found: { code: 'model_not_found', status: 404, meaning: 'the request names a model this router does not serve' },
  worker_not_found: { code: 'worker_not_found', status: 404, meaning: 'DELETE /admin/workers names a worker that is not in the fleet' },
  method_not_allowed: {
    code: 'method_not_allowed',
    status: 405,
    meaning: 'the route exists but not for this method (see the Allow header)',
  },
  worker_exists: { code: 'worker_exists', status: 409, meaning: 'POST /admin/workers names a worker already in the fleet' },
  discovery_managed: {
    code: 'discovery_managed',
    status: 409,
    meaning: '/admin/workers while a discovery mode (--dns-discovery) owns the fleet',
  },
  request_timeout: { code: 'request_timeout', status: 408, meaning: 'headers or body not received within the client timeouts' },
  payload_too_large: { code: 'payload_too_large', status: 413, meaning: 'body over --max-body-bytes (or chunk extensions too large)' },
  unsupported_media_type: { code: 'unsupported_media_type', status: 415, meaning: 'a generation body not sent as application/json' },
  request_shed: {
    code: 'request_shed',
    status: 429,
    meaning:
      'the request said it may be shed (x-routerctl-priority below 0) and every worker is queued past the gate, or under --admission slo no worker is predicted to start it within --ttft-slo-ms; retry after Retry-After',
  },
  request_header_fields_too_large: {
    code: 'request_header_fields_too_large',
    status: 431,
    meaning: 'request line and headers over 16 KiB',
  },
  internal_error: { code: 'internal_error', status: 500, meaning: 'a router bug; the request was not sent on' },
  upstream_unreachable: {
    code: 'upstream_unreachable',
    status: 502,
    meaning: 'no worker could be reached, and no other worker could take the request',
  },
  upstream_error: {
    code: 'upstream_error',
    status: 502,
    meaning: 'the worker answered with an error status and no other worker could take the request (x-router-upstream-status)',
  },
  upstream_body_incomplete: {
    code: 'upstream_body_incomplete',
    status: 502,
    meaning: 'the worker ended its response early (an in-band SSE error event once streaming)',
  },
  no_healthy_workers: { code: 'no_healthy_workers', status: 503, meaning: 'no worker is routable (all breakers open, or none configured)' },
  policy_selection_failed: { code: 'policy_selection_failed', status: 503, meaning: 'the routing policy found no worker for this request' },
  breaker_open: { code: 'breaker_open', status: 503, meaning: 'the selected worker is cooling down after repeated failures' },
  upstream_overloaded: {
    code: 'upstream_overloaded',
    status: 503,
    meaning: 'the worker answered 429 or 503 and no other worker could take the request (x-router-upstream-status)',
  },
  shutting_down: { code: 'shutting_down', status: 503, meaning: 'the router is draining after a stop signal; retry on another replica' },
  upstream_timeout: { code: 'upstream_timeout', status: 504, meaning: 'the worker did not answer within --request-timeout-secs' },
} satisfies Record<string, ApiErrorEntry>);

export type ApiErrorCode = keyof typeof API_ERROR_CODES;

/** Longest client-supplied text echoed back in an error message. */
export const MAX_ECHO_CHARS = 256;

/**
 * The reference router's error contract: `{"error":{"type","code","message"}}` plus
 * the `x-router-error-code` header; `type` is invalid_request_error for 4xx and
 * server_error otherwise. Messages never name a worker URL.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const ApiErrors = {
  badRequest: (message: string) => new ApiError(400, 'bad_request', message),
  notFound: () => new ApiError(404, 'not_found', 'no such route'),
  methodNotAllowed: (allow: string) => new ApiError(405, 'method_not_allowed', `method not allowed; use ${allow}`, { allow }),
  modelNotFound: (model: string) => new ApiError(404, 'model_not_found', `model '${echo(model)}' is not served by this router`),
  // The rest of the body is not read, so the connection cannot be reused: say so.
  payloadTooLarge: (limit: number) =>
    new ApiError(413, 'payload_too_large', `request body exceeds ${limit} bytes`, { connection: 'close' }),
  // Refused before the body is read, like a 413: the connection cannot be reused.
  unsupportedMediaType: () =>
    new ApiError(415, 'unsupported_media_type', "request body must be JSON, sent with 'Content-Type: application/json'", {
      connection: 'close',
      'accept-post': 'application/json',
    }),
  bodyIncomplete: () => new ApiError(400, 'bad_request', 'request body ended before it was complete', { connection: 'close' }),
  unauthorized: () => new ApiError(401, 'unauthorized', 'missing or wrong bearer token for /admin', { 'www-authenticate': 'Bearer' }),
  adminTokenRequired: () =>
    new ApiError(
      403,
      'admin_token_required',
      'changing the fleet needs --admin-token: start the router with one and send it as a bearer token',
    ),
  workerExists: () => new ApiError(409, 'worker_exists', 'that worker is already in the fleet'),
  workerNotFound: () => new ApiError(404, 'worker_not_found', 'no worker with that URL is in the fleet'),
  discoveryManaged: (mode: string) =>
    new ApiError(409, 'discovery_managed', `the fleet is managed by ${mode} discovery; change it there, not through /admin/workers`),
  noHealthyWorkers: () => new ApiError(503, 'no_healthy_workers', 'no healthy workers available'),
  selectionFailed: () => new ApiError(503, 'policy_selection_failed', 'service unavailable'),
  // Closing the connection sends the client's next request to a fresh connection, which a load balancer routes elsewhere.
  shuttingDown: () => new ApiError(503, 'shutting_down', 'router is shutting down', { connection: 'close' }),
  upstreamUnreachable: () => new ApiError(502, 'upstream_unreachable', 'upstream worker unreachable'),
  upstreamIncomplete: () => new ApiError(502, 'upstream_body_incomplete', 'upstream worker ended the stream early'),
  upstreamTimeout: () => new ApiError(504, 'upstream_timeout', 'upstream worker timed out'),
  // A worker answered with an error status and no other worker could take the request.
  upstreamError: (status: number) =>
    new ApiError(502, 'upstream_error', `upstream worker failed (HTTP ${status})`, { 'x-router-upstream-status': String(status) }),
  upstreamOverloaded: (status: number) =>
    new ApiError(503, 'upstream_overloaded', 'upstream workers are overloaded; retry later', {
      'x-router-upstream-status': String(status),
    }),
  // GIE's answer for a sheddable request while the pool is saturated; one second is the gate's sampling horizon.
  shed: () => new ApiError(429, 'request_shed', 'every worker is queued and the request may be shed; retry later', { 'retry-after': '1' }),
  // --admission slo: the selected engine's predicted wait ahead is the retry (docs/routing.md §SLO admission).
  shedSlo: (goalMs: number, retryAfterS: number) =>
    new ApiError(
      429,
      'request_shed',
      `no worker is predicted to start this request within the ${goalMs} ms TTFT goal (--ttft-slo-ms); retry after Retry-After, or send x-routerctl-priority: 1 for a request that must not be shed`,
      { 'retry-after': String(retryAfterS) },
    ),
  breakerOpen: () => new ApiError(503, 'breaker_open', 'the selected worker is cooling down after repeated failures'),
  internal: () => new ApiError(500, 'internal_error', 'internal error'),
} as const;

/** Protocol-level errors (no request object: answered on the raw socket by the HTTP edge). */
export const ProtocolErrors: Record<ClientErrorStatus, () => ApiError> = {
  400: () => new ApiError(400, 'bad_request', 'malformed HTTP request'),
  405: () =>
    new ApiError(405, 'method_not_allowed', 'method not allowed; use GET, HEAD, POST, OPTIONS', { allow: 'GET, HEAD, POST, OPTIONS' }),
  408: () => new ApiError(408, 'request_timeout', 'request not received in time'),
  413: () => new ApiError(413, 'payload_too_large', 'chunk extensions too large'),
  431: () => new ApiError(431, 'request_header_fields_too_large', 'request headers too large'),
};

/** The envelope for a protocol-level error, for createTrackedServer's raw-socket answer. */
export function protocolErrorResponse(status: ClientErrorStatus): RawErrorResponse {
  const err = ProtocolErrors[status]();
  return {
    headers: { 'content-type': 'application/json', 'x-router-error-code': err.code, ...err.headers },
    body: JSON.stringify(errorEnvelope(err)),
  };
}

/** Client text for a message: at most MAX_ECHO_CHARS, never half a surrogate pair. */
function echo(text: string): string {
  if (text.length <= MAX_ECHO_CHARS) return text;
  const cut = /[\ud800-\udbff]/.test(text[MAX_ECHO_CHARS - 1]!) ? MAX_ECHO_CHARS - 1 : MAX_ECHO_CHARS;
  return `${text.slice(0, cut)}…`;
}

export function errorEnvelope(err: ApiError): { error: { type: string; code: string; message: string } } {
  return { error: { type: err.status < 500 ? 'invalid_request_error' : 'server_error', code: err.code, message: err.message } };
}

/**
 * The envelope as one server-sent event: how a stream whose 200 headers are already
 * out reports a failure (docs/retries-and-breaker.md).
 */
export function sseErrorEvent(err: ApiError): string {
  return `data: ${JSON.stringify(errorEnvelope(err))}\n\n`;
}

export function sendApiError(res: ServerResponse, err: ApiError): void {
  // Headers already out, or the client gone (an aborted upload): nothing more to say. The
  // request's socket, not res.socket, which is null while a pipelined answer waits its turn.
  const socket = res.req?.socket;
  if (res.headersSent || socket?.destroyed || socket?.writableEnded) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(errorEnvelope(err));
  res.writeHead(err.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-router-error-code': err.code,
    ...err.headers,
  });
  res.end(body);
}
