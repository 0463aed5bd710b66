export { Router } from './router.js';
export { DnsDiscovery } from './discovery/dns-discovery.js';
export type { Resolution } from './discovery/dns-discovery.js';
export { KubernetesDiscovery } from './discovery/kubernetes-discovery.js';
export { kubernetesOptions } from './discovery/discovery-for.js';
export type { RouterOptions } from './router.js';
export type { AdminState, AdminWorker } from '../contract/index.js';
export { createLogger, silentLogger } from './logging/logger.js';
export type { Logger, LogFormat } from './logging/logger.js';
export { textKey } from './request/request-keying.js';
export { PrefixLookup } from './state/prefix-lookup.js';
export { LoadTable } from './state/load-monitor/index.js';
export { pollIntervalMs } from './state/load-monitor/load-sampler.js';
export { PrefixIndex } from './state/prefix-index/index.js';
export {
  createPolicy,
  HOLD_RECHECK_MS,
  PrefillEstimator,
  PrefillTicket,
  predictedUncachedTokens,
  queueGate,
  sloAdmission,
} from './policies/index.js';
export type { CacheAwareDecision, PolicyWorker, PrefillEstimate, PrefixSignal, QueueGate } from './policies/index.js';
export { API_ERROR_CODES, ApiError, ApiErrors } from './api-error/api-error.js';
export { engineBlockKeys, PredictedPrefixes } from './state/kv-index/index.js';
export type { EngineHashScheme } from './state/kv-index/index.js';
export { UsageCountScanner, DecisionRing, ownerSummary } from './state/decisions/index.js';
export { UpstreamPool } from './upstream/upstream-pool.js';
export type { UpstreamController, UpstreamHandler, UpstreamRequestOptions } from './upstream/upstream-attempt.js';
export type { UpstreamPoolOptions } from './upstream/upstream-pool.js';
export { extProcServices } from './epp/index.js';
