import { gatewayYaml, runEnvoy } from '../../perf/support/envoy-gateway.js';
import type { GatewayConfig, RunningEnvoy } from '../../perf/support/envoy-gateway.js';
import { peer } from './peers.js';

export type { GatewayConfig } from '../../perf/support/envoy-gateway.js';
export type Envoy = RunningEnvoy;

/**
 * The real Envoy (the peers tier's `envoy`), running a deploy/envoy configuration as
 * committed, with only its addresses changed (perf/support/envoy-gateway.ts).
 */
export function startEnvoy(config: GatewayConfig, o: { eppPort: number; engines?: readonly string[] }): Promise<Envoy> {
  return runEnvoy(peer('envoy').paths.bin!, gatewayYaml(config, o));
}
