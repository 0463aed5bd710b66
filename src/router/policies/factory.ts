import type { RouterConfig } from '../../config/index.js';
import { CacheAwarePolicy } from './cache-aware/index.js';
import { PowerOfNPolicy } from './power-of-n.js';
import { RandomPolicy } from './random.js';
import { RoundRobinPolicy } from './round-robin.js';
import type { Policy } from './types.js';

/** Build the configured policy; the config was validated, so every value is in range. */
export function createPolicy(config: RouterConfig): Policy {
  switch (config.policy) {
    case 'round_robin':
      return new RoundRobinPolicy();
    case 'random':
      return new RandomPolicy();
    case 'power_of_n':
      return new PowerOfNPolicy(config.powerOfNChoices);
    case 'cache_aware':
      return new CacheAwarePolicy({
        minMatchedTokens: config.cacheAffinityMinMatchedTokens,
        minMatchRatio: config.cacheAffinityMinMatchRatio,
        candidateMinWorkers: config.cacheCandidateMinWorkers,
        candidateRatio: config.cacheCandidateRatio,
        candidateMaxWorkers: config.cacheCandidateMaxWorkers,
        switchMarginTokens: config.cacheSwitchMarginTokens,
        pressureGuard: !config.disablePressureGuard,
        pressureAbsTokens: config.pressureAbsThresholdTokens,
        pressureAbsMs: config.pressureAbsThresholdMs,
        pressureRel: config.pressureRelThreshold,
        workerQueueLimit: config.workerQueueLimit,
        saturationQueueFloor: config.saturationQueueFloor,
        minLoadChoices: config.minLoadChoices,
      });
  }
}
