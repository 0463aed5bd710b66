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

/** Stream a chat completion; resolves with the tokens seen and whether the stream was cut. */
async function streamTokens(url: string, maxTokens: number): Promise<{ tokens: number; cut: boolean }> {
  let text = '';
  let cut = false;
  try {
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'drain me' }], max_tokens: maxTokens, ignore_eos: true, stream: true }),
    });
    for await (const c of res.body) text += (c as Buffer).toString();
  } catch {
    cut = true;
  }
  if (!text.includes('data: [DONE]')) cut = true;
  return { tokens: text.split('"content":"').length - 2, cut }; // the first chunk carries the role with empty content
}

/** Long streams on an engine running in real time (~6 ms a token): in flight for many seconds. */
async function saturated(
  drainSecs: number,
  extra: string[] = [],
): Promise<{ url: string; streams: Array<Promise<{ tokens: number; cut: boolean }>> }> {
  fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 1 });
  serve = startCli([
    'serve',
    '--no-tui',
    '--port',
    '0',
    '--shutdown-drain-secs',
    String(drainSecs),
    '--log-format',
    'json',
    ...extra,
    '--worker-urls',
    ...fleet.urls,
  ]);
  const [url] = await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m);
  const streams = Array.from({ length: 4 }, () => streamTokens(url, 5000));
  // Every stream admitted and flowing before the signal.
  for (let i = 0; i < 100 && !(await inflight(url, 4)); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await inflight(url, 4)).toBe(true);
  return { url, streams };
}

async function inflight(url: string, n: number): Promise<boolean> {
  const s = (await rawRequest(`${url}/admin/state`)).json() as { workers: Array<{ inflight: number }> };
  return s.workers.reduce((a, w) => a + w.inflight, 0) >= n;
}

type LogLine = { level: string; msg: string; cut?: number; exit_status?: number; readiness_pause?: boolean };
const jsonLines = (text: string): LogLine[] =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

describe('routerctl serve (built binary)', () => {
  it('--no-tui --port 0 prints its URL; SIGINT with requests in flight lets them finish and exits 0 as soon as they have', async () => {
    fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 4 });
    serve = startCli(['serve', '--no-tui', '--port', '0', '--shutdown-drain-secs', '30', '--worker-urls', ...fleet.urls]);
    const [url] = await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m);
    const inflightStreams = [streamTokens(url, 150), streamTokens(url, 150), streamTokens(url, 150)];
    await new Promise((r) => setTimeout(r, 150));
    const t0 = Date.now();
    serve.child.kill('SIGINT');
    expect(await Promise.all(inflightStreams)).toEqual(Array(3).fill({ tokens: 150, cut: false }));
    const { code } = await serve.exited(10_000);
    expect(code).toBe(0);
    // SIGINT skips the readiness pause: done with the requests, not at the 30 s ceiling.
    expect(Date.now() - t0).toBeLessThan(8000);
    await expect(rawRequest(`${url}/healthz`)).rejects.toThrow();
    expect(serve.stderr()).toMatch(/shutting down/);
  });

  it('SIGTERM on an idle router with the default settings: 503 for the readiness pause, then exit 0, long before the 30 s ceiling', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 50 });
    serve = startCli(['serve', '--no-tui', '--port', '0', '--log-format', 'json', '--worker-urls', ...fleet.urls]);
    const [url] = await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m);
    const t0 = Date.now();
    serve.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect((await rawRequest(`${url}/readyz`)).status).toBe(503);
    expect((await serve.exited(15_000)).code).toBe(0);
    // The pause is --shutdown-readiness-secs (5 s), not --shutdown-drain-secs (30 s).
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4900);
    expect(Date.now() - t0).toBeLessThan(7000);
    expect(jsonLines(serve.stderr()).find((l) => l.msg === 'router stopped')).toMatchObject({ cut: 0, exit_status: 0 });
  });

  it('SIGTERM on an idle router: /readyz 503 at once, new generations 503 shutting_down, serving through the pause, clean exit 0 at the drain time', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 50 });
    serve = startCli([
      'serve',
      '--no-tui',
      '--port',
      '0',
      '--shutdown-drain-secs',
      '2',
      '--log-format',
      'json',
      '--worker-urls',
      ...fleet.urls,
    ]);
    const [url] = await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m);
    expect((await rawRequest(`${url}/readyz`)).status).toBe(200);
    const t0 = Date.now();
    serve.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const ready = await rawRequest(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.connection).toBe('close');
    expect((await rawRequest(`${url}/v1/models`)).status).toBe(200);
    const refused = await rawRequest(`${url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'late' }] }),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers['x-router-error-code']).toBe('shutting_down');
    expect((await serve.exited(8000)).code).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(Date.now() - t0).toBeLessThan(4500);
    const lines = jsonLines(serve.stderr());
    expect(lines.some((l) => l.msg === 'router listening' && l.level === 'info')).toBe(true);
    expect(lines.find((l) => l.msg === 'shutting down')?.readiness_pause).toBe(true);
    expect(lines.find((l) => l.msg === 'router stopped')).toMatchObject({ cut: 0, exit_status: 0 });
  });

  it('saturated, SIGTERM with --shutdown-drain-secs 1: exits within the drain time + 2 s, one line with the cut count, status 143', async () => {
    const { streams } = await saturated(1);
    const t0 = Date.now();
    serve!.child.kill('SIGTERM');
    const { code } = await serve!.exited(10_000);
    const took = Date.now() - t0;
    expect(code).toBe(143);
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(3000);
    const results = await Promise.all(streams);
    expect(results.every((r) => r.cut)).toBe(true);
    const cutLines = jsonLines(serve!.stderr()).filter((l) => /cutting in-flight requests/.test(l.msg));
    expect(cutLines).toHaveLength(1);
    expect(cutLines[0]).toMatchObject({ level: 'warn', cut: 4 });
    expect(jsonLines(serve!.stderr()).find((l) => l.msg === 'router stopped')).toMatchObject({ cut: 4, exit_status: 143 });
  });

  it('idle, a second SIGTERM during the readiness pause forces the stop: status 143, not 0', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 1 });
    serve = startCli([
      'serve',
      '--no-tui',
      '--port',
      '0',
      '--shutdown-drain-secs',
      '5',
      '--log-format',
      'json',
      '--worker-urls',
      ...fleet.urls,
    ]);
    await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m);
    serve.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    serve.child.kill('SIGTERM');
    expect((await serve.exited(8000)).code).toBe(143);
    expect(jsonLines(serve.stderr()).find((l) => l.msg === 'router stopped')).toMatchObject({ cut: 0, exit_status: 143 });
  });

  it('saturated, a second signal ends it at once (well before a 30 s drain), status 130 after a first SIGINT', async () => {
    const { streams } = await saturated(30);
    serve!.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    serve!.child.kill('SIGTERM');
    const { code } = await serve!.exited(10_000);
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(code).toBe(130);
    expect((await Promise.all(streams)).every((r) => r.cut)).toBe(true);
    const cutLines = jsonLines(serve!.stderr()).filter((l) => /cutting in-flight requests/.test(l.msg));
    expect(cutLines).toEqual([expect.objectContaining({ msg: 'second stop request: cutting in-flight requests', cut: 4 })]);
  });

  it('without --worker-urls runs the embedded simulated fleet, says so, and leaves nothing behind', async () => {
    serve = startCli(['serve', '--no-tui', '--port', '0', '--sim-rate', '0', '--sim-workers', '2', '--shutdown-drain-secs', '0']);
    const [url] = await serve.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m, 20_000);
    expect(serve.stderr()).toMatch(/SIMULATED fleet/);
    const state = (await rawRequest(`${url}/admin/state`)).json() as { router: { simulated: boolean }; workers: Array<{ url: string }> };
    expect(state.router.simulated).toBe(true);
    expect(state.workers).toHaveLength(2);
    const r = await rawRequest(`${url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
    });
    expect(r.status).toBe(200);
    serve.child.kill('SIGTERM');
    expect((await serve.exited(10_000)).code).toBe(0);
    for (const w of state.workers) await expect(rawRequest(`${w.url}/health`)).rejects.toThrow();
  });
});
