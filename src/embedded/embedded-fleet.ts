import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { StopSignals } from '../cli/index.js';
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
 * How long past the router's drain time a signalled fleet waits for the router to stop
 * it: the router's second of closing and the 2 s it gives the fleet
 * (docs/http-edge.md §Shutdown and signals). Only a signal sent to the fleet alone
 * gets this far.
 */
const ROUTER_STOP_MARGIN_MS = 3000;

/**
 * Start the simulated engines and the synthetic client in their own process, so the
 * engines' event loop never competes with the router's.
 */
export function startEmbeddedFleet(opts: { workers: number; seed: number; drainSecs: number }): Promise<EmbeddedFleet> {
  const args = ['embedded-fleet', '--workers', String(opts.workers), '--seed', String(opts.seed), '--drain-secs', String(opts.drainSecs)];
  const child = fork(BIN, args, {
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

/**
 * The child side: run engines, wait for a traffic target, stop when told or orphaned.
 *
 * A signal to the whole process group (systemd's control-group kill, a closed
 * terminal, Ctrl-C) reaches this process as well as the router, whose in-flight
 * requests run on these engines while it drains
 * (docs/http-edge.md §Shutdown and signals). So the first stop signal is the router's
 * to act on: it stops the fleet when its drain is done. A second signal cuts at once,
 * and so does the drain time running out without a word from the router.
 */
export async function runEmbeddedFleetChild(opts: { workers: number; seed: number; drainSecs: number }): Promise<void> {
  const send = (m: ToParent): void => void process.send?.(m);
  const stops = new StopSignals().listen(['SIGTERM', 'SIGINT', 'SIGHUP']);
  let fleet: SimFleet;
  try {
    fleet = await startSimFleet({ workers: opts.workers, portBase: 0, host: '127.0.0.1', seed: opts.seed, params: EMBEDDED_ENGINE });
  } catch (err) {
    stops.dispose();
    send({ type: 'error', message: (err as Error).message });
    process.exitCode = 1;
    return;
  }
  let driver: TrafficDriver | undefined;
  send({ type: 'ready', urls: fleet.urls });
  const cut = await new Promise<boolean>((resolve) => {
    const stop = (): void => resolve(false);
    void stops.second.then(() => resolve(true));
    void stops.first.then(() => setTimeout(() => resolve(true), opts.drainSecs * 1000 + ROUTER_STOP_MARGIN_MS));
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
  });
  if (driver) await driver.stop();
  await fleet.close();
  process.exit(stops.exitStatus(cut));
}
