export { createPolicy } from './factory.js';
export { RoundRobinPolicy } from './round-robin.js';
export { RandomPolicy } from './random.js';
export { PowerOfNPolicy } from './power-of-n.js';
export { fleetIsAllQueued, gateIsInert, queueGateAdmits } from './cache-aware/queue-gate.js';
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
  CacheAwareDecision,
} from './types.js';
