import { expect } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import { Router, silentLogger } from '../../src/router/index.js';
import type { Logger } from '../../src/router/index.js';
import { post, rawRequest } from './http.js';
import type { RawResponse } from './http.js';

/** A real router on 127.0.0.1:0 in front of the given workers; defaults tuned for fast tests. */
export async function startTestRouter(
  workerUrls: string[],
  overrides: Partial<RouterConfig> = {},
  log: Logger = silentLogger,
): Promise<Router> {
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
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, msg, ...(fields ? { fields } : {}) });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * Send one chat request through the router (a system message plus "go") and return
 * the URL of the worker that served it, read from the admin state's counters.
 */
export async function sendChat(r: Router, system: string, model = 'sim-llama-3.1-8b'): Promise<string> {
  const before = new Map(r.state().workers.map((w) => [w.url, w.requests_total]));
  const res = await post(`${r.url}/v1/chat/completions`, {
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: 'go' },
    ],
    max_tokens: 2,
  });
  expect(res.status).toBe(200);
  const served = r.state().workers.filter((w) => w.requests_total > before.get(w.url)!);
  expect(served).toHaveLength(1);
  return served[0]!.url;
}

/**
 * One chat with a system prompt and the client's own x-request-id, answered 200: the
 * request's decision record can then be read back by that id (docs/decisions.md).
 */
export async function sendChatWithId(r: Router, id: string, system: string, model = 'sim-llama-3.1-8b'): Promise<RawResponse> {
  const body = JSON.stringify({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: 'go' },
    ],
    max_tokens: 2,
  });
  const res = await rawRequest(`${r.url}/v1/chat/completions`, { method: 'POST', body, headers: { 'x-request-id': id } });
  expect(res.status).toBe(200);
  return res;
}
