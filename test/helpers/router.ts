import { defaultConfig } from '../../src/config/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import { Router, silentLogger } from '../../src/router/index.js';
import type { Logger } from '../../src/router/index.js';

/** A real router on 127.0.0.1:0 in front of the given workers; defaults tuned for fast tests. */
export async function startTestRouter(workerUrls: string[], overrides: Partial<RouterConfig> = {}, log: Logger = silentLogger): Promise<Router> {
  const config: RouterConfig = {
    ...defaultConfig(),
    host: '127.0.0.1',
    port: 0,
    workerUrls,
    loadPollIntervalMs: 50,
    loadTimeoutMs: 500,
    shutdownDrainSecs: 0,
    tui: false,
    ...overrides,
  };
  const router = new Router({ config, log, version: 'test' });
  await router.start();
  return router;
}

/** A logger that keeps its lines, for asserting on warnings. */
export function memoryLogger(): Logger & { lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, ...(fields ? { fields } : {}) });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
