export { RouterctlError, UsageError } from './routerctl-error.js';
export { ErrorCodes, bindError, usageError } from './catalogue.js';
export type { ErrorCode } from './catalogue.js';
