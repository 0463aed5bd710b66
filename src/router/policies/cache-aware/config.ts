import type { RouterConfig } from '../../../config/index.js';
import { NO_QUEUE_GATE, type QueueGate } from '../queue-gate.js';

/** The schema's settings the cache-aware policy reads, under the schema's own names. */
export const CACHE_AWARE_SETTINGS = [
  'cacheAffinityMinMatchedTokens',
  'cacheAffinityMinMatchRatio',
  'cacheCandidateMinWorkers',
  'cacheCandidateRatio',
  'cacheCandidateMaxWorkers',
  'cacheSwitchMarginTokens',
  'disablePressureGuard',
  'pressureAbsThresholdTokens',
  'pressureAbsThresholdMs',
  'pressureRelThreshold',
  'minLoadChoices',
] as const satisfies ReadonlyArray<keyof RouterConfig>;

/**
 * Tuning for the cache-aware policy: the schema's settings by the schema's names
 * (meanings and defaults follow the Rust router's AffinityConfig: docs/configuration.md
 * §Cache-aware routing, §Pressure guard), and the router's queue gate. Validation
 * (ranges, cross-flag rules) belongs to src/config, so the policy trusts what it is given.
 */
export type CacheAwareConfig = Readonly<
  Omit<Pick<RouterConfig, (typeof CACHE_AWARE_SETTINGS)[number]>, 'cacheAffinityMinMatchedTokens'>
> & {
  /** A candidate needs at least this many matched prefix tokens; undefined skips the check. */
  readonly cacheAffinityMinMatchedTokens: number | undefined;
  /** The gate the candidates, the pair and the range pass through (--worker-queue-limit, --saturation-queue-floor). */
  readonly gate: QueueGate;
};

export const DEFAULT_CACHE_AWARE_CONFIG: CacheAwareConfig = Object.freeze({
  cacheAffinityMinMatchedTokens: 1024,
  cacheAffinityMinMatchRatio: null,
  cacheCandidateMinWorkers: 8,
  cacheCandidateRatio: 0.05,
  cacheCandidateMaxWorkers: 32,
  cacheSwitchMarginTokens: 1024,
  disablePressureGuard: false,
  pressureAbsThresholdTokens: 1024,
  pressureAbsThresholdMs: null,
  pressureRelThreshold: 1.5,
  minLoadChoices: 2,
  gate: NO_QUEUE_GATE,
});

/**
 * Defaults overlaid with the given fields. An explicit `undefined` for an optional
 * threshold disables it, which is how a caller says "unset".
 */
export function cacheAwareConfig(overrides: Partial<CacheAwareConfig> = {}): CacheAwareConfig {
  return Object.freeze({ ...DEFAULT_CACHE_AWARE_CONFIG, ...overrides });
}

/** The policy's config as the router's config and gate set it. */
export function cacheAwareConfigFrom(config: RouterConfig, gate: QueueGate): CacheAwareConfig {
  const settings: Partial<Record<(typeof CACHE_AWARE_SETTINGS)[number], unknown>> = {};
  for (const key of CACHE_AWARE_SETTINGS) settings[key] = config[key];
  return cacheAwareConfig({ ...(settings as Pick<RouterConfig, (typeof CACHE_AWARE_SETTINGS)[number]>), gate });
}
