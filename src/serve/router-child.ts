/**
 * The router process behind `routerctl serve`'s console (forked by RouterProcess).
 * The parent draws; this process only routes, so a slow frame never delays a request
 * (docs/http-edge.md §The console's router process). Protocol over the IPC channel:
 *   parent → {type:'start', config}  once
 *   child  → {type:'listening', url} or {type:'failed', code, message, exitCode}
 *   parent → {type:'stop', signal}   first: drain, second: cut now (docs/http-edge.md,
 *                                    "Shutdown and signals"); `signal` is the one the
 *                                    console got, SIGINT for its q key
 * SIGTERM, SIGINT and SIGHUP sent to this process count as stops too, counted apart
 * from the console's: a signal to the whole process group (systemd, a closed terminal)
 * that the console also forwards is one stop, not two. Losing the console (IPC
 * disconnect) cuts at once. The exit status is serve's: 0 after a clean drain, 128 +
 * the signal's number when requests were cut. Logs go to stderr, which the parent
 * keeps for its log pane and crash report.
 */
import type { RouterConfig } from '../config/index.js';
import { StopSignals } from '../cli/index.js';
import type { StopSignal } from '../cli/index.js';
import { RouterctlError } from '../errors/index.js';
import { serveUntilStopped, startRouter } from './run-router.js';

export type ToRouterChild = { type: 'start'; config: RouterConfig } | { type: 'stop'; signal: StopSignal };
export type FromRouterChild = { type: 'listening'; url: string } | { type: 'failed'; code: string; message: string; exitCode: number };

const CONSOLE = 'console';
const stops = new StopSignals().listen(['SIGTERM', 'SIGINT', 'SIGHUP']);
let starting = false;

const send = (m: FromRouterChild): void => {
  if (process.connected) process.send?.(m);
};

async function start(config: RouterConfig): Promise<void> {
  if (starting) return;
  starting = true;
  let running;
  try {
    running = await startRouter(config);
  } catch (err) {
    const e = err instanceof RouterctlError ? err : undefined;
    send({
      type: 'failed',
      code: e?.code ?? 'RCTL_E_INTERNAL',
      message: e?.message ?? (err as Error)?.message ?? String(err),
      exitCode: e?.exitCode ?? 1,
    });
    process.exitCode = e?.exitCode ?? 1;
    process.disconnect?.();
    return;
  }
  send({ type: 'listening', url: running.url });
  // A stop that arrived while starting is already in `stops`.
  const status = await serveUntilStopped(running, stops);
  // Everything is closed; exit now rather than when a stray keep-alive socket or timer lets go.
  process.exit(status);
}

// Asked to stop before being asked to start: nothing to drain.
void stops.first.then(() => {
  if (!starting) process.exit(0);
});

process.on('message', (m: ToRouterChild) => {
  if (m.type === 'start') void start(m.config);
  else if (m.type === 'stop') stops.request(m.signal ?? 'SIGINT', CONSOLE);
});
process.on('disconnect', () => {
  // The console is gone without waiting for us (it waits for our exit otherwise): do not linger.
  stops.request('SIGHUP', CONSOLE);
  stops.request('SIGHUP', CONSOLE);
});
