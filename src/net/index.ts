export { readBodyChunks, readBodyWithLimit } from './read-body.js';
export type { BodyChunks } from './read-body.js';
export { checkingIntervalMs, clientErrorStatus, createTrackedServer } from './http-server.js';
export type { ClientErrorStatus, RawErrorResponse, TrackedServerOptions } from './http-server.js';
