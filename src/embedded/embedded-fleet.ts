import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startSimFleet } from '../sim/index.js';
import type { SimFleet } from '../sim/index.js';
import { TrafficDriver, Workload } from '../workload/index.js';
import { EMBEDDED_ENGINE, EMBEDDED_WORKLOAD } from './embedded-defaults.js';

/** Parent ↔ child messages over the fork IPC channel. */
type ToChild = { type: 'traffic'; url: string; rate: number; model?: string } | { type: 'stop' };
type ToParent = { type: 'ready'; urls: string[] } | { type: 'error'; message: string };

export interface EmbeddedFleet {
  readonly urls: string[];
  readonly child: ChildProcess;
  startTraffic(url: string, rate: number, model?: string): void;
  stop(): Promise<void>;
}

const BIN = fileURLToPath(new URL('../../../bin/routerctl.js', import.meta.url));

/**
 * Start the simulated engines and the synthetic client in their own process, so the
 * engines' event loop never competes with the router's.
 */
export function startEmbeddedFleet(opts: { workers: number; seed: number }): Promise<EmbeddedFleet> {
  const child = fork(BIN, ['embedded-fleet', '--workers', String(opts.workers), '--seed', String(opts.seed)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`simulated fleet exited early (status ${code})`));
    child.once('exit', onExit);
    child.once('message', (m: ToParent) => {
      child.off('exit', onExit);
      if (m.type !== 'ready') {
        reject(new Error(m.type === 'error' ? m.message : 'simulated fleet failed to start'));
        return;
      }
      resolve({
        urls: m.urls,
        child,
        startTraffic: (url, rate, model) => child.send({ type: 'traffic', url, rate, ...(model ? { model } : {}) } satisfies ToChild),
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            if (child.connected) child.send({ type: 'stop' } satisfies ToChild);
            else child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** The child side: run engines, wait for a traffic target, stop when told or orphaned. */
export async function runEmbeddedFleetChild(opts: { workers: number; seed: number }): Promise<void> {
  const send = (m: ToParent): void => void process.send?.(m);
  let fleet: SimFleet;
  try {
    fleet = await startSimFleet({ workers: opts.workers, portBase: 0, host: '127.0.0.1', seed: opts.seed, params: EMBEDDED_ENGINE });
  } catch (err) {
    send({ type: 'error', message: (err as Error).message });
    process.exitCode = 1;
    return;
  }
  let driver: TrafficDriver | undefined;
  send({ type: 'ready', urls: fleet.urls });
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.on('message', (m: ToChild) => {
      if (m.type === 'stop') stop();
      if (m.type === 'traffic' && !driver && m.rate > 0) {
        driver = new TrafficDriver(new Workload({ ...EMBEDDED_WORKLOAD, seed: opts.seed, rate: m.rate }), {
          url: m.url,
          ...(m.model ? { model: m.model } : {}),
          maxInFlight: 2000,
        });
        driver.start();
      }
    });
    // The parent went away without a word: do not linger as an orphan.
    process.on('disconnect', stop);
    process.on('SIGTERM', stop);
    process.on('SIGINT', () => {}); // the parent decides; Ctrl-C reaches the whole group
  });
  if (driver) await driver.stop();
  await fleet.close();
  process.exit(0);
}
