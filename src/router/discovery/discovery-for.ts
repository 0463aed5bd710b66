import { parseSelector } from '../../config/index.js';
import type { RouterConfig } from '../../config/index.js';
import type { Logger } from '../logging/logger.js';
import type { DiscoveredFleet, Discovery } from './discovery.js';
import { DnsDiscovery } from './dns-discovery.js';
import { KubernetesDiscovery } from './kubernetes-discovery.js';

/** The discovery the configuration asks for (validation allows at most one), or undefined for a static fleet. */
export function discoveryFor(c: RouterConfig, fleet: DiscoveredFleet, log: Logger): Discovery | undefined {
  if (c.dnsDiscovery !== null) {
    return new DnsDiscovery(
      {
        name: c.dnsDiscovery,
        port: c.dnsDiscoveryPort,
        scheme: c.dnsDiscoveryScheme,
        resolver: c.dnsResolver,
        intervalMs: c.discoveryInterval * 1000,
      },
      fleet,
      log,
    );
  }
  if (c.serviceDiscovery) return new KubernetesDiscovery(kubernetesOptions(c), fleet, log);
  return undefined;
}

/** The Kubernetes discovery settings of a validated configuration. */
export function kubernetesOptions(c: RouterConfig): ConstructorParameters<typeof KubernetesDiscovery>[0] {
  const parsed = parseSelector(c.selector);
  return {
    selector: parsed.ok ? parsed.selector : [],
    service: c.serviceDiscoveryService,
    inferencePool: c.inferencePool,
    namespace: c.serviceDiscoveryNamespace,
    port: c.serviceDiscoveryPort,
    kubeconfig: c.kubeconfig,
  };
}
