/**
 * Tuning for the cache-aware policy. Field meanings and defaults follow the Rust
 * router's AffinityConfig (docs/configuration.md §Cache-aware routing, §Pressure guard);
 * validation (ranges, cross-flag rules) belongs to src/config, so the policy trusts
 * what it is given.
 */
export interface CacheAwareConfig {
  /** A candidate needs at least this many matched prefix tokens; undefined skips the check. */
  readonly minMatchedTokens: number | undefined;
  /** A candidate needs matched/input ≥ this ratio; undefined skips the check. */
  readonly minMatchRatio: number | null;
  readonly candidateMinWorkers: number;
  readonly candidateRatio: number;
  readonly candidateMaxWorkers: number;
  /** Extra uncached tokens a candidate may carry and still compete on pressure with the work floor. */
  readonly switchMarginTokens: number;
  /** Whether the tournament may override a near cache gain with a materially less pressured worker. */
  readonly pressureGuard: boolean;
  readonly pressureAbsTokens: number;
  readonly pressureAbsMs: number | null;
  readonly pressureRel: number;
  /** --worker-queue-limit: the gate rejects a worker whose fresh waiting count is ≥ this. null: gate off. */
  readonly workerQueueLimit: number | null;
  /** --saturation-queue-floor: enables the saturation pin. Requires the limit. */
  readonly saturationQueueFloor: number | null;
  /** --min-load-choices: k of the power-of-k fallback. */
  readonly minLoadChoices: number;
}

export const DEFAULT_CACHE_AWARE_CONFIG: CacheAwareConfig = Object.freeze({
  minMatchedTokens: 1024,
  minMatchRatio: null,
  candidateMinWorkers: 8,
  candidateRatio: 0.05,
  candidateMaxWorkers: 32,
  switchMarginTokens: 1024,
  pressureGuard: true,
  pressureAbsTokens: 1024,
  pressureAbsMs: null,
  pressureRel: 1.5,
  workerQueueLimit: null,
  saturationQueueFloor: null,
  minLoadChoices: 2,
});

/**
 * Defaults overlaid with the given fields. An explicit `undefined` for an optional
 * threshold disables it, which is how a caller says "unset".
 */
export function cacheAwareConfig(overrides: Partial<CacheAwareConfig> = {}): CacheAwareConfig {
  return Object.freeze({ ...DEFAULT_CACHE_AWARE_CONFIG, ...overrides });
}
