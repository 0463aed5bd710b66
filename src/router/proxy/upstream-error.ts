/** undici codes that mean the worker (or the network to it) failed. */
const WORKER_FAULT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_INFO',
  'UND_ERR_HEADERS_OVERFLOW',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);
/** System errno codes (ECONNREFUSED, ECONNRESET, EAI_AGAIN, …), not node's own ERR_* codes. */
const ERRNO_CODE = /^E(?!RR_)[A-Z0-9_]+$/;

/**
 * Whose failure an error from sending a request is. Only the worker's (unreachable,
 * reset, malformed answer) and timeouts count against its breaker; anything else —
 * undici refusing an argument or a header, a feature it does not support, a pool the
 * router closed, a TypeError — is the router's own and must not (docs/retries-and-breaker.md).
 */
export function classifyUpstreamError(err: unknown): 'timeout' | 'unreachable' | 'router' {
  const e = err as { code?: unknown; name?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (WORKER_FAULT_CODES.has(code) || ERRNO_CODE.test(code) || code.startsWith('HPE_') || e?.name === 'HTTPParserError')
    return 'unreachable';
  return 'router';
}
