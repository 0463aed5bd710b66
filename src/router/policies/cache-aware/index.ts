/** What the router may import from the cache-aware policy. Everything else is internal. */
export { CacheAwarePolicy, type CacheAwareSelection } from './cache-aware-policy.js';
export {
  cacheAwareConfig,
  cacheAwareConfigFrom,
  CACHE_AWARE_SETTINGS,
  DEFAULT_CACHE_AWARE_CONFIG,
  type CacheAwareConfig,
} from './config.js';
export { SATURATION_PIN_LOG_MESSAGE } from './decision.js';
export { QUEUE_GATE_BLIND_LOG_SAMPLE, QUEUE_GATE_INERT_MESSAGE } from './inert-warning.js';
export type { PrefillPressureSource } from './pressure.js';
export type { CacheGateAudit } from './resolve-cache-candidates.js';
