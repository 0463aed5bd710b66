/**
 * The router process behind `routerctl serve`'s console (forked by RouterProcess).
 * The parent draws; this process only routes, so a slow frame never delays a request
 * (DESIGN §1). Protocol over the IPC channel:
 *   parent → {type:'start', config}  once
 *   child  → {type:'listening', url} or {type:'failed', code, message, exitCode}
 *   parent → {type:'stop'}           first: drain (in-flight requests finish, no
 *                                    readiness pause: the operator asked), second: now
 * SIGINT/SIGTERM count as a stop; losing the parent (IPC disconnect) stops at once.
 * Logs go to stderr, which the parent keeps for its log pane and crash report.
 */
import type { RouterConfig } from '../config/index.js';
import { RouterctlError } from '../errors/index.js';
import { startRouter } from './run-router.js';
import type { RunningRouter } from './run-router.js';

export type ToRouterChild = { type: 'start'; config: RouterConfig } | { type: 'stop' };
export type FromRouterChild =
  | { type: 'listening'; url: string }
  | { type: 'failed'; code: string; message: string; exitCode: number };

let running: RunningRouter | undefined;
let starting = false;
let stops = 0;

const send = (m: FromRouterChild): void => {
  if (process.connected) process.send?.(m);
};

async function start(config: RouterConfig): Promise<void> {
  if (starting) return;
  starting = true;
  try {
    running = await startRouter(config);
  } catch (err) {
    const e = err instanceof RouterctlError ? err : undefined;
    send({ type: 'failed', code: e?.code ?? 'RCTL_E_INTERNAL', message: e?.message ?? (err as Error)?.message ?? String(err), exitCode: e?.exitCode ?? 1 });
    process.exitCode = e?.exitCode ?? 1;
    process.disconnect?.();
    return;
  }
  send({ type: 'listening', url: running.url });
  // A stop that arrived while starting.
  if (stops > 0) void stop('console');
}

async function stop(reason: string): Promise<void> {
  stops++;
  if (!running) {
    if (!starting) process.exit(0);
    return; // start() stops once it is listening
  }
  const r = running;
  if (stops === 1) {
    r.log.info('shutting down', { signal: reason, inflight: r.router.inflight, drain_pause_s: 0 });
    const stopping = r.stop();
    void r.stop(); // a second call cuts the readiness pause: the operator is at the keyboard
    await stopping;
    // Everything is closed; exit now rather than when the last stray timer fires (the
    // router's drain-pause timer outlives a cut pause by up to --shutdown-drain-secs).
    process.exit(0);
  } else if (stops === 2) {
    r.log.warn('stopping now: cutting in-flight requests', { inflight: r.router.inflight });
    await r.router.close();
  }
}

process.on('message', (m: ToRouterChild) => {
  if (m.type === 'start') void start(m.config);
  else if (m.type === 'stop') void stop('console');
});
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('disconnect', () => {
  // The console is gone (it disconnects itself only after we stopped): do not linger.
  if (stops === 0) {
    void stop('console gone');
    void stop('console gone');
  }
});
