import { codesByName, errorCatalogue } from './error-entry.js';
import { RouterctlError, UsageError } from './routerctl-error.js';

/**
 * The one catalogue of coded runtime errors (configuration errors have their own
 * catalogue in src/config/, because each carries a validation class and an origin).
 * Codes are part of the CLI contract: add new ones, never rename. The codes the
 * router answers HTTP clients with are the HTTP contract's, catalogued with their
 * statuses by the router (API_ERROR_CODES; docs/http-edge.md). All three share the
 * entry shape of error-entry.ts, and the man pages' ERRORS sections are written from
 * them (npm run docs).
 */
export const RUNTIME_ERRORS = errorCatalogue({
  USAGE: { code: 'RCTL_E_USAGE', meaning: 'invalid options or arguments, or an invalid configuration; exit status 2' },
  PORT_IN_USE: { code: 'RCTL_E_PORT_IN_USE', meaning: 'the port to listen on is already taken; pick another, or 0 for a free one' },
  BIND_FAILED: {
    code: 'RCTL_E_BIND_FAILED',
    meaning: 'the address cannot be listened on: no such local address, or a port below 1024 without the right',
  },
  UNREACHABLE: { code: 'RCTL_E_UNREACHABLE', meaning: 'the router or engine named did not answer: no connection, or no answer in time' },
  UNAUTHORIZED: { code: 'RCTL_E_UNAUTHORIZED', meaning: "the router's admin API wants a token, or refused the one given" },
  NOT_A_ROUTER: {
    code: 'RCTL_E_NOT_A_ROUTER',
    meaning: 'the URL answers, but with neither a routerctl admin API nor router metrics',
  },
  NO_DECISION: {
    code: 'RCTL_E_NO_DECISION',
    meaning: 'the router holds no decision record for that request: never routed, or already out of its ring',
  },
  BENCH_START: { code: 'RCTL_E_BENCH_START', meaning: 'a router or simulated fleet the benchmark needs did not start' },
  TOKENIZER: { code: 'RCTL_E_TOKENIZER', meaning: 'the --tokenizer file cannot be read, or is not a Hugging Face tokenizer' },
  KUBE_CREDENTIALS: {
    code: 'RCTL_E_KUBE_CREDENTIALS',
    meaning: '--service-discovery has no usable credentials: not in a pod and no --kubeconfig, or a kubeconfig routerctl cannot read',
  },
  INTERNAL: { code: 'RCTL_E_INTERNAL', meaning: 'a routerctl bug; ROUTERCTL_DEBUG=1 prints its stack' },
});

/** Name → code, as call sites spell them (`ErrorCodes.USAGE`). */
export const ErrorCodes = codesByName(RUNTIME_ERRORS);

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
