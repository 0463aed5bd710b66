import { request } from 'undici';
import { spawnRouterctl } from './child-process.js';
import type { RouterctlChild } from './child-process.js';
import type { Configuration } from './configurations.js';
import type { FleetShape } from './fleet-shape.js';
import { startPeerRouter } from './peer-routers.js';

export interface StartedProcess<T> {
  value: T;
  process: RouterctlChild;
}

/** `routerctl sim --json` on free ports; resolves with the engines' URLs once all listen. */
export async function startSimProcess(shape: FleetShape, timeoutMs = 20_000): Promise<StartedProcess<string[]>> {
  const p = spawnRouterctl('simulated fleet', [
    'sim',
    '--json',
    '--port-base',
    '0',
    '--workers',
    String(shape.workers),
    '--max-running',
    String(shape.maxRunning),
    '--speedup',
    String(shape.speedup),
    '--kv-blocks',
    String(shape.kvBlocks),
    '--flavor',
    shape.flavor,
    '--seed',
    String(shape.seed),
    ...(shape.contextLength !== undefined ? ['--context-length', String(shape.contextLength)] : []),
  ]);
  try {
    const urls = await p.firstLine((line) => {
      if (!line.startsWith('{')) return undefined;
      const info = JSON.parse(line) as { urls?: unknown };
      return Array.isArray(info.urls) ? (info.urls as string[]) : undefined;
    }, timeoutMs);
    return { value: urls, process: p };
  } catch (err) {
    await p.stop({ killAfterMs: 1000 });
    throw err;
  }
}

/**
 * `routerctl serve --no-tui --port 0` in front of the engines with one configuration's
 * flags; resolves with its URL once /readyz says it can route (workers discovered).
 */
export async function startRouterProcess(workerUrls: string[], args: string[], timeoutMs = 20_000): Promise<StartedProcess<string>> {
  // Nothing is in flight when the benchmark stops a router, so its drain pause would only be waited out.
  const drain = args.some((a) => a.split('=')[0] === '--shutdown-drain-secs') ? [] : ['--shutdown-drain-secs', '0'];
  const p = spawnRouterctl('router', [
    'serve',
    '--no-tui',
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--worker-urls',
    ...workerUrls,
    ...drain,
    ...args,
  ]);
  try {
    const url = await p.firstLine((line) => (/^https?:\/\/\S+$/.test(line) ? line : undefined), timeoutMs);
    await waitReady(url, timeoutMs);
    return { value: url, process: p };
  } catch (err) {
    await p.stop({ signals: 2, killAfterMs: 1000 });
    throw err;
  }
}

async function waitReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const res = await request(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {
      // not listening yet, or slow: try again until the deadline
    }
    if (performance.now() > deadline) throw new Error(`router at ${url} did not become ready within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The router of one arm in front of its engines: `routerctl serve` with the arm's flags,
 * or the peer router it names (docs/bench.md §Peer routers as arms). Resolves once it
 * can route to every engine.
 */
export async function startArmRouter(workerUrls: string[], c: Configuration): Promise<{ value: string; stop(): Promise<void> }> {
  if (c.peer !== undefined) {
    const p = await startPeerRouter(c.peer, { workerUrls, extra: c.args });
    return { value: p.url, stop: () => p.close() };
  }
  const r = await startRouterProcess(workerUrls, c.args);
  // A second SIGTERM cuts a drain pause a configuration may have asked for.
  return { value: r.value, stop: () => r.process.stop({ signals: 2 }) };
}
