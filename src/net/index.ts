export { readBodyChunks, readBodyWithLimit } from './read-body.js';
export type { BodyChunks } from './read-body.js';
export { checkingIntervalMs, clientErrorStatus, createTrackedServer, listenOn, urlOf } from './http-server.js';
export type { ClientErrorStatus, RawErrorResponse, TrackedServerOptions } from './http-server.js';
export { MAX_HEAD_BYTES, ResponseParser } from './response-parser.js';
export type { ParseStep, ResponseSink } from './response-parser.js';
