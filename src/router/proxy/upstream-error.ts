import type { UpstreamFailureCode } from '../upstream/upstream-failure.js';

const WORKER_FAULT_CODES: ReadonlySet<string> = new Set<UpstreamFailureCode>([
  'UPSTREAM_CONNECT_TIMEOUT',
  'UPSTREAM_TLS',
  'UPSTREAM_CLOSED',
  'UPSTREAM_MALFORMED',
]);
/** System errno codes (ECONNREFUSED, ECONNRESET, EAI_AGAIN, …), not node's own ERR_* codes. */
const ERRNO_CODE = /^E(?!RR_)[A-Z0-9_]+$/;

/**
 * Whose failure an error from sending a request is. Only the worker's (unreachable,
 * reset, malformed answer) and timeouts count against its breaker; anything else — a
 * header the router cannot send, connections the router closed, a TypeError — is the
 * router's own and must not (docs/retries-and-breaker.md).
 */
export function classifyUpstreamError(err: unknown): 'timeout' | 'unreachable' | 'router' {
  const e = err as { code?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === 'UPSTREAM_HEADERS_TIMEOUT' || code === 'UPSTREAM_BODY_TIMEOUT') return 'timeout';
  if (WORKER_FAULT_CODES.has(code) || ERRNO_CODE.test(code)) return 'unreachable';
  return 'router';
}
