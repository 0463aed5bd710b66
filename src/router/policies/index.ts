export { createPolicy } from './factory.js';
export { RoundRobinPolicy } from './round-robin.js';
export { RandomPolicy } from './random.js';
export { PowerOfNPolicy } from './power-of-n.js';
export { NO_QUEUE_GATE, queueGate } from './queue-gate.js';
export type { QueueGate } from './queue-gate.js';
export { PrefillEstimator, PrefillTicket, predictedCachedTokens, predictedUncachedTokens } from './prefill-rate/index.js';
export { predictedTtftMs } from './predicted-ttft.js';
export type { PrefillEstimate } from './prefill-rate/index.js';
export type {
  Policy,
  PolicyName,
  PolicyWorker,
  BasicLoad,
  NativeLoad,
  LoadView,
  PoolState,
  PrefixMatch,
  PrefixSignal,
  SelectionContext,
  SelectionOutcome,
  SelectionSuccess,
  SelectionFailure,
  CacheAwareAudit,
  CacheAwareDecision,
} from './types.js';
export { HOLD_CAPACITY, HOLD_RECHECK_MS, sloAdmission, sloRetryAfterS, UNSHEDDABLE_PRIORITY } from './slo-admission.js';
export type { AdmissionVerdict } from './slo-admission.js';
