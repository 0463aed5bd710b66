import { defaultConfig } from '../../../config/index.js';
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
  'capacityAdmission',
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

/** The cache-aware settings of a router configuration, with a gate. */
function settingsOf(config: RouterConfig, gate: QueueGate): CacheAwareConfig {
  const settings: Partial<Record<(typeof CACHE_AWARE_SETTINGS)[number], unknown>> = {};
  for (const key of CACHE_AWARE_SETTINGS) settings[key] = config[key];
  return Object.freeze({ ...(settings as Pick<RouterConfig, (typeof CACHE_AWARE_SETTINGS)[number]>), gate });
}

/** The schema's defaults (one value per fact: they are written there, not again here), with no gate. */
export const DEFAULT_CACHE_AWARE_CONFIG: CacheAwareConfig = settingsOf(defaultConfig(), NO_QUEUE_GATE);

/**
 * Defaults overlaid with the given fields. An explicit `undefined` for an optional
 * threshold disables it, which is how a caller says "unset".
 */
export function cacheAwareConfig(overrides: Partial<CacheAwareConfig> = {}): CacheAwareConfig {
  return Object.freeze({ ...DEFAULT_CACHE_AWARE_CONFIG, ...overrides });
}

/** The policy's config as the router's config and gate set it. */
export function cacheAwareConfigFrom(config: RouterConfig, gate: QueueGate): CacheAwareConfig {
  return settingsOf(config, gate);
}
