import type { RouterConfig } from '../../config/index.js';
import type { RegistryOptions } from './worker-registry.js';

/** The registry's settings from the config: the breaker's (docs/retries-and-breaker.md), and connection budgets under the request timeout. */
export function registryOptions(
  c: Pick<RouterConfig, 'cbThreshold' | 'cbCoolDownSecs' | 'requestTimeoutSecs' | 'kvEvents'>,
  now: () => number,
): RegistryOptions {
  return {
    cbThreshold: c.cbThreshold > 0 ? c.cbThreshold : null,
    cbCoolDownMs: c.cbCoolDownSecs * 1000,
    connections: 1024,
    introspectTimeoutMs: 2000,
    connectTimeoutMs: Math.min(10_000, c.requestTimeoutSecs * 1000),
    now,
    kvEvents: c.kvEvents,
  };
}
