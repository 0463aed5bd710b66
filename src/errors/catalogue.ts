import { RouterctlError, UsageError } from './routerctl-error.js';

/**
 * The one catalogue of coded runtime errors (configuration errors have their own
 * catalogue in src/config/, because each carries a validation class and an origin).
 * Codes are part of the CLI contract: add new ones, never rename. The codes the
 * router answers HTTP clients with are the HTTP contract's, catalogued with their
 * statuses in src/router/server/api-error.ts (API_ERROR_CODES; docs/http-edge.md).
 */
export const ErrorCodes = {
  USAGE: 'RCTL_E_USAGE',
  PORT_IN_USE: 'RCTL_E_PORT_IN_USE',
  BIND_FAILED: 'RCTL_E_BIND_FAILED',
  UNREACHABLE: 'RCTL_E_UNREACHABLE',
  UNAUTHORIZED: 'RCTL_E_UNAUTHORIZED',
  NOT_A_ROUTER: 'RCTL_E_NOT_A_ROUTER',
  NO_DECISION: 'RCTL_E_NO_DECISION',
  BENCH_START: 'RCTL_E_BENCH_START',
  TOKENIZER: 'RCTL_E_TOKENIZER',
  INTERNAL: 'RCTL_E_INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export function usageError(message: string): UsageError {
  return new UsageError(ErrorCodes.USAGE, message);
}

/** Translate a listen() failure into a line an operator can act on. */
export function bindError(host: string, port: number, cause: unknown): RouterctlError {
  const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (errno === 'EADDRINUSE') {
    return new RouterctlError(
      ErrorCodes.PORT_IN_USE,
      `port ${port} on ${host} is already in use; pick another with --port (or --port-base), or 0 for a free one`,
      { cause },
    );
  }
  if (errno === 'EACCES') {
    return new RouterctlError(ErrorCodes.BIND_FAILED, `not allowed to listen on ${host}:${port}; use a port above 1023`, { cause });
  }
  if (errno === 'EADDRNOTAVAIL' || errno === 'ENOTFOUND') {
    return new RouterctlError(
      ErrorCodes.BIND_FAILED,
      `cannot listen on ${host}: no such local address; use 127.0.0.1 or an address of this machine`,
      { cause },
    );
  }
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new RouterctlError(ErrorCodes.BIND_FAILED, `cannot listen on ${host}:${port}: ${detail}`, { cause });
}
