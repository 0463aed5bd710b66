/**
 * Every error routerctl raises on purpose carries a stable `code` that scripts can
 * match, and a one-line message that says what is wrong and how to fix it. The CLI
 * prints `message` (never a stack) and maps `exitCode` to the process exit status.
 */
export class RouterctlError extends Error {
  readonly code: string;
  readonly exitCode: number;

  constructor(code: string, message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RouterctlError';
    this.code = code;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** A usage or configuration problem: exit status 2, as for yargs usage errors. */
export class UsageError extends RouterctlError {
  constructor(code: string, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { exitCode: 2, ...options });
    this.name = 'UsageError';
  }
}
