export { RouterctlError, UsageError } from './routerctl-error.js';
export { ErrorCodes, RUNTIME_ERRORS, bindError, usageError } from './catalogue.js';
export { catalogueEntries, codesByName, errorCatalogue } from './error-entry.js';
export type { ApiErrorEntry, ErrorEntry } from './error-entry.js';
export type { ErrorCode } from './catalogue.js';
