export { Router } from './router.js';
export type { RouterOptions } from './router.js';
export type { AdminState, AdminWorker } from '../contract/index.js';
export { createLogger, silentLogger } from './logging/logger.js';
export type { Logger, LogFormat } from './logging/logger.js';
export { CHARS_PER_TOKEN } from './request/inference-request.js';
