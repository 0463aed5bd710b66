export { DecisionRing, MAX_CANDIDATES, ownerSummary } from './decision-ring.js';
export type { DecisionFilter, DecisionInput, GateVerdict, OwnerVerdict } from './decision-ring.js';
export { RequestIds } from './request-ids.js';
export { UsageCountScanner } from './usage-count-scanner.js';
export { DecisionRecorder } from './decision-recorder.js';
export type { DecisionRecorderOptions, RequestTrace } from './decision-recorder.js';
export { EngineUsage } from './engine-usage.js';
