import { colorEnabled } from '../cli/color.js';
import type { RouterConfig } from '../config/index.js';
import { FleetFeed } from '../top/fleet-feed.js';
import { RouterProcess } from './router-process.js';

/** How often the console asks the router for its state: live enough to watch queues move. */
const INTERVAL_MS = 500;

/**
 * `routerctl serve` on a terminal: the router runs in a child process and this one
 * draws its console from the child's admin stream (the same console as `top`).
 * q / Ctrl-C (or SIGTERM, SIGHUP) drain and stop the router, then restore the terminal
 * and exit 0; pressing again stops it at once. A router that dies on its own stays on
 * screen with its exit status and last log lines until q, and the exit status is 1.
 * Resolves to the exit status.
 */
export async function runServeConsole(config: RouterConfig): Promise<number> {
  process.stderr.write('starting the router…\n');
  // Ink takes over a second to import cold: load it while the router starts, not after.
  const tuiLoading = import('../tui/index.js');
  tuiLoading.catch(() => undefined); // awaited below; a start failure must not leave it unhandled
  const router = await RouterProcess.start(config);
  const feed = FleetFeed.start({ urls: [router.url], source: 'admin', token: config.adminToken ?? undefined, intervalMs: INTERVAL_MS });
  let quitRequested = false;
  let screen: { close(): void; done: Promise<void> } | undefined;
  const quit = (): void => {
    quitRequested = true;
    if (router.get().phase === 'exited') screen?.close();
    else router.stop();
  };
  const onSignal = (): void => quit();
  for (const s of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(s, onSignal);
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
      onQuit: () => quit(),
    });
    // Asked to stop: leave as soon as the router is gone. Crashed: stay and show it.
    void router.exited.then(() => {
      if (quitRequested) screen?.close();
    });
    await screen.done;
  } finally {
    for (const s of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.off(s, onSignal);
    if (router.get().phase !== 'exited') {
      // The console went away first (it threw): the router must not outlive it.
      router.stop();
      router.stop();
      const t = setTimeout(() => router.kill(), 8000);
      await router.exited;
      clearTimeout(t);
    }
    await feed.close();
  }
  return router.get().crashed ? 1 : 0;
}
