export { readBodyWithLimit } from './read-body.js';
export { createTrackedServer } from './http-server.js';
