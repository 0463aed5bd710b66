import type { RouterConfig } from '../config/index.js';
import { keepsReadinessPause } from '../cli/index.js';
import type { StopSignals } from '../cli/index.js';
import { packageVersion } from '../cli/index.js';
import { startEmbeddedFleet, autoRate, EMBEDDED_WORKLOAD_SUMMARY } from '../embedded/index.js';
import type { EmbeddedFleet } from '../embedded/index.js';
import { Router, createLogger } from '../router/index.js';
import type { Logger } from '../router/index.js';
import { keepRequestsYoung } from './young-generation.js';

export interface RunningRouter {
  router: Router;
  fleet: EmbeddedFleet | undefined;
  url: string;
  log: Logger;
  config: RouterConfig;
}

/** How long the simulated fleet gets to stop after the router, before it is killed. */
const FLEET_STOP_MS = 2000;

/**
 * Start the router on the resolved configuration. Without worker URLs, first start
 * the embedded simulated fleet (its own process) and, once the router listens, its
 * synthetic traffic. Everything said goes through the structured logger.
 */
export async function startRouter(config: RouterConfig, log: Logger = createLogger(config.logFormat)): Promise<RunningRouter> {
  keepRequestsYoung();
  let fleet: EmbeddedFleet | undefined;
  let effective = config;
  // With discovery the fleet is what DNS or the Kubernetes API lists, maybe nobody yet: never the simulator.
  if (config.workerUrls.length === 0 && config.dnsDiscovery === null && !config.serviceDiscovery) {
    fleet = await startEmbeddedFleet({ workers: config.simWorkers, seed: 42, drainSecs: config.shutdownDrainSecs });
    effective = { ...config, workerUrls: fleet.urls };
    log.warn('SIMULATED fleet: no --worker-urls given, running the embedded simulator', { workers: fleet.urls.length });
  }
  const router = new Router({ config: effective, log, version: packageVersion(), simulated: fleet !== undefined });
  let url: string;
  try {
    url = await router.start();
  } catch (err) {
    await router.close().catch(() => undefined);
    await fleet?.stop();
    throw err;
  }
  log.info('router listening', {
    url,
    ...(router.eppAddress !== null ? { epp: router.eppAddress } : {}),
    policy: effective.policy,
    model: router.model,
    workers: router.registry.workers.length,
    ...(effective.dnsDiscovery !== null ? { dns_discovery: effective.dnsDiscovery } : {}),
    worker_queue_limit: effective.workerQueueLimit,
    saturation_queue_floor: effective.saturationQueueFloor,
  });
  if (fleet) {
    const rate = config.simRate ?? autoRate(config.simWorkers);
    if (rate > 0) {
      fleet.startTraffic(url, rate, router.model ?? undefined);
      log.info('synthetic traffic started', { rate_per_s: rate, workload: EMBEDDED_WORKLOAD_SUMMARY });
    } else {
      log.info('synthetic traffic off (--sim-rate 0)');
    }
  }
  return { router, fleet, url, log, config: effective };
}

/**
 * Serve until stopped, on the shutdown contract (docs/http-edge.md, "Shutdown and
 * signals"): the first stop request drains for at most --shutdown-drain-secs (keeping
 * the readiness pause for SIGTERM, skipping it for SIGINT and SIGHUP), a second one
 * cuts what is left at once; the simulated fleet stops last. Resolves to the exit
 * status: 0 when every in-flight request finished, 128 + the first signal's number
 * when some had to be cut or a second request forced the stop.
 */
export async function serveUntilStopped(running: RunningRouter, stops: StopSignals): Promise<number> {
  const { router, log, config } = running;
  const first = await stops.first;
  const pause = keepsReadinessPause(first.signal) && !stops.cut;
  log.info('shutting down', {
    signal: first.signal,
    ...(first.source === 'signal' ? {} : { from: first.source }),
    inflight: router.inflight,
    drain_s: config.shutdownDrainSecs,
    readiness_pause: pause,
  });
  const cut = await router.shutdown({ skipPause: pause ? undefined : Promise.resolve(), cutNow: stops.second.then(() => undefined) });
  await stopFleet(running.fleet, cut > 0);
  // A second stop request forced the end: not a clean drain, even if nothing was left to cut at that instant.
  const status = stops.exitStatus(cut > 0 || stops.cut);
  log.info('router stopped', { cut, exit_status: status });
  return status;
}

/** The simulated fleet: stopped in good order after a clean drain, killed after a cut (its requests are gone anyway). */
async function stopFleet(fleet: EmbeddedFleet | undefined, cut: boolean): Promise<void> {
  if (!fleet || fleet.child.exitCode !== null || fleet.child.signalCode !== null) return;
  if (cut) {
    const gone = new Promise((r) => fleet.child.once('exit', r));
    fleet.child.kill('SIGKILL');
    await gone;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([fleet.stop(), new Promise((r) => (timer = setTimeout(r, FLEET_STOP_MS)))]);
  clearTimeout(timer);
  if (fleet.child.exitCode === null && fleet.child.signalCode === null) fleet.child.kill('SIGKILL');
}
