import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { rawRequest } from '../helpers/http.js';
import { startCli } from '../helpers/cli.js';
import type { RunningCli } from '../helpers/cli.js';

let fleet: SimFleet | undefined;
let serve: RunningCli | undefined;
afterEach(async () => {
  serve?.child.kill('SIGKILL');
  await fleet?.close();
  serve = fleet = undefined;
});

async function streamTokens(url: string, maxTokens: number): Promise<number> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'drain me' }], max_tokens: maxTokens, ignore_eos: true, stream: true }),
  });
  let n = 0;
  for await (const c of res.body) n += (c as Buffer).toString().split('"content":"').length - 1;
  return n - 1; // the first chunk carries the role with empty content
}

describe('routerctl serve (built binary)', () => {
  it('--no-tui --port 0 prints its URL; SIGTERM with requests in flight finishes them and exits 0', async () => {
    fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 4 });
    serve = startCli(['serve', '--no-tui', '--port', '0', '--shutdown-drain-secs', '0', '--worker-urls', ...fleet.urls]);
    const [url] = await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m);
    const inflight = [streamTokens(url, 150), streamTokens(url, 150), streamTokens(url, 150)];
    await new Promise((r) => setTimeout(r, 150));
    serve.child.kill('SIGTERM');
    expect(await Promise.all(inflight)).toEqual([150, 150, 150]);
    const { code } = await serve.exited(10_000);
    expect(code).toBe(0);
    await expect(rawRequest(`${url}/healthz`)).rejects.toThrow();
    expect(serve.stderr()).toMatch(/shutting down/);
  });

  it('SIGTERM turns /readyz to 503 at once and keeps serving through the drain pause', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 50 });
    serve = startCli(['serve', '--no-tui', '--port', '0', '--shutdown-drain-secs', '2', '--log-format', 'json', '--worker-urls', ...fleet.urls]);
    const [url] = await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m);
    expect((await rawRequest(`${url}/readyz`)).status).toBe(200);
    serve.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect((await rawRequest(`${url}/readyz`)).status).toBe(503);
    expect((await rawRequest(`${url}/v1/models`)).status).toBe(200);
    serve.child.kill('SIGTERM'); // a second signal cuts the pause short
    expect((await serve.exited(5000)).code).toBe(0);
    const lines = serve.stderr().trim().split('\n').map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(lines.some((l) => l.msg === 'router listening' && l.level === 'info')).toBe(true);
  });

  it('without --worker-urls runs the embedded simulated fleet, says so, and leaves nothing behind', async () => {
    serve = startCli(['serve', '--no-tui', '--port', '0', '--sim-rate', '0', '--sim-workers', '2', '--shutdown-drain-secs', '0']);
    const [url] = await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m, 20_000);
    expect(serve.stderr()).toMatch(/SIMULATED fleet/);
    const state = (await rawRequest(`${url}/admin/state`)).json() as { router: { simulated: boolean }; workers: Array<{ url: string }> };
    expect(state.router.simulated).toBe(true);
    expect(state.workers).toHaveLength(2);
    const r = await rawRequest(`${url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }) });
    expect(r.status).toBe(200);
    serve.child.kill('SIGTERM');
    expect((await serve.exited(10_000)).code).toBe(0);
    for (const w of state.workers) await expect(rawRequest(`${w.url}/health`)).rejects.toThrow();
  });
});
