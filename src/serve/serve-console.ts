import { colorEnabled } from '../cli/index.js';
import { StopSignals } from '../cli/index.js';
import type { RouterConfig } from '../config/index.js';
import { FleetFeed } from '../fleet/index.js';
import { exitReport } from './exit-report.js';
import { RouterProcess } from './router-process.js';

/** How often the console asks the router for its state: live enough to watch queues move. */
const INTERVAL_MS = 500;

/**
 * `routerctl serve` on a terminal: the router runs in a child process and this one
 * draws its console from the child's admin stream (the same console as `top`).
 * q / Ctrl-C (counted as SIGINT), SIGTERM and SIGHUP drain and stop the router on
 * serve's contract (docs/http-edge.md, "Shutdown and signals"), then restore the
 * terminal; pressing again, or a second signal, cuts at once. The exit status is the
 * router's: 0 after a clean drain, 128 + the signal's number when requests were cut.
 * A router that dies on its own stays on screen with its exit status and last log
 * lines until q, and the exit status is 1. Resolves to the exit status.
 */
export async function runServeConsole(config: RouterConfig): Promise<number> {
  process.stderr.write('starting the router…\n');
  // Ink takes over a second to import cold: load it while the router starts, not after.
  const tuiLoading = import('../tui/index.js');
  tuiLoading.catch(() => undefined); // awaited below; a start failure must not leave it unhandled
  const stops = new StopSignals().listen(['SIGTERM', 'SIGHUP', 'SIGINT']);
  const router = await RouterProcess.start(config).catch((err: unknown) => {
    stops.dispose();
    throw err;
  });
  const feed = FleetFeed.start({ urls: [router.url], source: 'admin', token: config.adminToken ?? undefined, intervalMs: INTERVAL_MS });
  let quitRequested = false;
  let screen: { close(): void; done: Promise<void> } | undefined;
  // A signal that came while the router was starting is in `stops` and acted on here.
  void stops.first.then(({ signal }) => {
    quitRequested = true;
    if (router.get().phase === 'exited') screen?.close();
    else router.stop(signal);
  });
  void stops.second.then(({ signal }) => router.stop(signal));
  try {
    const { runConsole } = await tuiLoading;
    screen = runConsole({
      feed,
      child: router,
      color: colorEnabled(process.stdout),
      title: 'routerctl serve',
      target: router.url,
      intervalMs: INTERVAL_MS,
      blockSize: config.blockSize,
      onQuit: () => {
        // The router is gone already (it crashed): q just leaves.
        if (router.get().phase === 'exited') screen?.close();
        stops.request('SIGINT', 'signal');
      },
    });
    // Asked to stop: leave as soon as the router is gone. Crashed: stay and show it.
    void router.exited.then(() => {
      if (quitRequested) screen?.close();
    });
    // A stop requested before the screen existed, for a router already gone.
    if (quitRequested && router.get().phase === 'exited') screen.close();
    await screen.done;
  } finally {
    stops.dispose();
    if (router.get().phase !== 'exited') {
      // The console went away first (it threw): the router must not outlive it.
      router.stop('SIGHUP');
      router.stop('SIGHUP');
      const t = setTimeout(() => router.kill(), 8000);
      await router.exited;
      clearTimeout(t);
    }
    await feed.close();
  }
  // The console's screen is gone with the terminal restored: a crash must not go with it.
  process.stderr.write(exitReport(router.get()));
  return router.exitStatus();
}
