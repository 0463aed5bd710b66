import type { RouterConfig } from '../../config/index.js';
import { CacheAwarePolicy, cacheAwareConfigFrom } from './cache-aware/index.js';
import { PowerOfNPolicy } from './power-of-n.js';
import type { QueueGate } from './queue-gate.js';
import { RandomPolicy } from './random.js';
import { RoundRobinPolicy } from './round-robin.js';
import type { Policy } from './types.js';

/** Build the configured policy over the router's one queue gate; the config was validated, so every value is in range. */
export function createPolicy(config: RouterConfig, gate: QueueGate): Policy {
  switch (config.policy) {
    case 'round_robin':
      return new RoundRobinPolicy();
    case 'random':
      return new RandomPolicy();
    case 'power_of_n':
      return new PowerOfNPolicy(config.powerOfNChoices);
    case 'cache_aware':
      return new CacheAwarePolicy(cacheAwareConfigFrom(config, gate));
  }
}
