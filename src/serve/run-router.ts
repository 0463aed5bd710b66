import type { RouterConfig } from '../config/index.js';
import { packageVersion } from '../cli/version.js';
import { startEmbeddedFleet, autoRate } from '../embedded/index.js';
import type { EmbeddedFleet } from '../embedded/index.js';
import { Router, createLogger } from '../router/index.js';
import type { Logger } from '../router/index.js';

export interface RunningRouter {
  router: Router;
  fleet: EmbeddedFleet | undefined;
  url: string;
  log: Logger;
  /** Drain and stop; a second call (second signal) cuts the drain pause short. */
  stop(): Promise<void>;
}

/**
 * Start the router on the resolved configuration. Without worker URLs, first start
 * the embedded simulated fleet (its own process) and, once the router listens, its
 * synthetic traffic. Everything said goes through the structured logger.
 */
export async function startRouter(config: RouterConfig, log: Logger = createLogger(config.logFormat)): Promise<RunningRouter> {
  let fleet: EmbeddedFleet | undefined;
  let effective = config;
  if (config.workerUrls.length === 0) {
    fleet = await startEmbeddedFleet({ workers: config.simWorkers, seed: 42 });
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
    policy: effective.policy,
    model: router.model,
    workers: effective.workerUrls.length,
    worker_queue_limit: effective.workerQueueLimit,
    saturation_queue_floor: effective.saturationQueueFloor,
  });
  if (fleet) {
    const rate = config.simRate ?? autoRate(config.simWorkers);
    if (rate > 0) {
      fleet.startTraffic(url, rate, router.model ?? undefined);
      log.info('synthetic traffic started', { rate_per_s: rate, workload: 'shared system prompts, multi-turn sessions, bursts x3' });
    } else {
      log.info('synthetic traffic off (--sim-rate 0)');
    }
  }
  let stopping: Promise<void> | undefined;
  let cutPause: () => void = () => {};
  const pause = new Promise<void>((r) => (cutPause = r));
  return {
    router,
    fleet,
    url,
    log,
    stop: () => {
      if (stopping) {
        cutPause();
        return stopping;
      }
      stopping = (async () => {
        await router.shutdown({ pause });
        await fleet?.stop();
        log.info('router stopped');
      })();
      return stopping;
    },
  };
}
