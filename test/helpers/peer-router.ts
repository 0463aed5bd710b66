import OpenAI from 'openai';
import type { AdminDecision, AdminDecisions, AdminState } from '../../src/contract/index.js';
import { startCli } from './cli.js';
import type { RunningCli } from './cli.js';
import { eventually, rawRequest } from './http.js';

/** A TCP port free on 127.0.0.1 now (an engine that takes a port number, not 0): the one the peer routers' launcher uses. */
export { freePort } from '../../src/bench/index.js';

/**
 * The built `routerctl serve` in front of real engines (test/peers/): the KV events
 * index, affinity from 64 matched tokens (the peers' prompts are a few hundred tokens),
 * load polled every 100 ms. Resolves once it listens.
 */
export async function startPeerRouter(
  workerUrls: readonly string[],
  args: readonly string[],
): Promise<{ cli: RunningCli; url: string; client: OpenAI }> {
  const cli = startCli([
    ...['serve', '--no-tui', '--port', '0', '--worker-urls', ...workerUrls, '--prefix-source', 'events'],
    ...['--cache-affinity-min-matched-tokens', '64', '--cache-switch-margin-tokens', '64', '--load-poll-interval-ms', '100'],
    ...args,
  ]);
  const [url] = await cli.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m, 30_000).catch((err: Error) => {
    cli.child.kill('SIGKILL');
    throw err;
  });
  return { cli, url: url!, client: new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }) };
}

export const adminState = async (url: string): Promise<AdminState> =>
  JSON.parse((await rawRequest(`${url}/admin/state`)).text) as AdminState;

/** The router's decision record of a request, by the id its response carried (x-request-id). */
export async function decisionOf(url: string, requestId: string | null): Promise<AdminDecision> {
  let found: AdminDecision | undefined;
  await eventually(
    async () =>
      (found = (JSON.parse((await rawRequest(`${url}/admin/decisions`)).text) as AdminDecisions).decisions.find(
        (d) => d.request_id === requestId,
      )) !== undefined,
    5000,
    20,
  );
  return found!;
}

/** Whole blocks two token lists share from their start: what an engine holding one reuses for the other. */
export function sharedBlocks(a: readonly number[], b: readonly number[], blockSize: number): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return Math.floor(n / blockSize);
}
