/**
 * What the router publishes and other areas read: the decision labels, the metric
 * family names, the admin state document and the queue gate's rule. The router writes these, the console,
 * bench and virtual runs read them; nothing here imports from those areas.
 */
export { DECISIONS } from './decisions.js';
export type { Decision } from './decisions.js';
export { METRIC_NAMES, ROUTER_METRIC_PREFIX } from './metric-names.js';
export type { MetricName } from './metric-names.js';
export { ADMIN_STATE_FIELDS, auditAdminDocument } from './admin-state.js';
export type { AdminEvent, AdminEventKind, AdminRouter, AdminState, AdminWorker } from './admin-state.js';
export type { AdminStateDelta } from './admin-state-delta.js';
export { isBelowFloor, isQueued } from './queue-rule.js';
export type { AdminDecision, AdminDecisionCandidate, AdminDecisions } from './admin-decisions.js';
