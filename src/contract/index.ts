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
export type { AdminEvent, AdminEventKind, AdminState } from './admin-state.js';
export { WORKER_FIELDS, WORKER_FIELD_ROWS } from './worker-fields.js';
export type {
  AdminWorker,
  FieldCompare,
  HistogramJson,
  KvEventsJson,
  LoadPushJson,
  PrefillJson,
  PollErrorJson,
  WorkerFieldRow,
  WorkerFields,
} from './worker-fields.js';
export { ROUTER_FIELDS } from './router-fields.js';
export type { AdminRouter } from './router-fields.js';
export { fieldTableMarkdown, isKind, readFields } from './json-kind.js';
export type { Checked, FieldRow, FieldsOf, JsonKind, TypeOf } from './json-kind.js';
export type { AdminStateDelta } from './admin-state-delta.js';
export { isBelowFloor, isQueued } from './queue-rule.js';
export type { AdminDecision, AdminDecisionCandidate, AdminDecisions } from './admin-decisions.js';
