import type { ServerResponse } from 'node:http';

/**
 * The reference router's error contract: `{"error":{"type","code","message"}}` plus
 * the `x-router-error-code` header; `type` is invalid_request_error for 4xx and
 * server_error otherwise. Messages never name a worker URL.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
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
  modelNotFound: (model: string) => new ApiError(404, 'model_not_found', `model '${model}' is not served by this router`),
  // The rest of the body is not read, so the connection cannot be reused: say so.
  payloadTooLarge: (limit: number) => new ApiError(413, 'payload_too_large', `request body exceeds ${limit} bytes`, { connection: 'close' }),
  unauthorized: () => new ApiError(401, 'unauthorized', 'missing or wrong bearer token for /admin', { 'www-authenticate': 'Bearer' }),
  noHealthyWorkers: () => new ApiError(503, 'no_healthy_workers', 'no healthy workers available'),
  selectionFailed: () => new ApiError(503, 'policy_selection_failed', 'service unavailable'),
  shuttingDown: () => new ApiError(503, 'service_overloaded', 'router is shutting down'),
  upstreamUnreachable: () => new ApiError(502, 'upstream_unreachable', 'upstream worker unreachable'),
  upstreamIncomplete: () => new ApiError(502, 'upstream_body_incomplete', 'upstream worker ended the response early'),
  upstreamTimeout: () => new ApiError(504, 'upstream_timeout', 'upstream worker timed out'),
  internal: () => new ApiError(500, 'internal_error', 'internal error'),
} as const;

export function errorEnvelope(err: ApiError): { error: { type: string; code: string; message: string } } {
  return { error: { type: err.status < 500 ? 'invalid_request_error' : 'server_error', code: err.code, message: err.message } };
}

export function sendApiError(res: ServerResponse, err: ApiError): void {
  if (res.headersSent) {
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
