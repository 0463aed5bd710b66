/**
 * What the router publishes and other areas read: the decision labels and the admin
 * state document. The router writes these, the console, bench and virtual runs read
 * them; nothing here imports from those areas.
 */
export { DECISIONS } from './decisions.js';
export type { Decision } from './decisions.js';
export { ADMIN_STATE_FIELDS, auditAdminDocument } from './admin-state.js';
export type { AdminRouter, AdminState, AdminWorker } from './admin-state.js';
