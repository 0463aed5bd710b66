import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import { defaultConfig } from '../../src/config/index.js';
import { StopSignals, signalExitStatus } from '../../src/cli/signals.js';
import { rawRequest } from '../helpers/http.js';
import { memoryLogger, startTestRouter } from '../helpers/router.js';

let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close().catch(() => undefined);
  await fleet?.close();
  router = fleet = undefined;
});

/** A stream that runs for many seconds (real-time engine, ~6 ms a token); resolves when it ends or is cut. */
function longStream(url: string, maxTokens = 5000): Promise<'done' | 'cut'> {
  return request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hold' }], max_tokens: maxTokens, ignore_eos: true, stream: true }),
  })
    .then(async (res) => {
      let text = '';
      for await (const c of res.body) text += (c as Buffer).toString();
      return text.includes('[DONE]') ? ('done' as const) : ('cut' as const);
    })
    .catch(() => 'cut' as const);
}

async function saturatedRouter(
  drainSecs: number,
  n = 3,
): Promise<{ streams: Array<Promise<'done' | 'cut'>>; log: ReturnType<typeof memoryLogger> }> {
  fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 1 });
  const log = memoryLogger();
  router = await startTestRouter(fleet.urls, { shutdownDrainSecs: drainSecs }, log);
  const streams = Array.from({ length: n }, () => longStream(router!.url));
  for (let i = 0; i < 100 && router.inflight < n; i++) await new Promise((r) => setTimeout(r, 20));
  expect(router.inflight).toBe(n);
  return { streams, log };
}

const cutLines = (log: ReturnType<typeof memoryLogger>) => log.lines.filter((l) => /cutting in-flight requests/.test(l.msg));

describe('Router.shutdown: a drain with a ceiling', () => {
  it('cuts what is still in flight when the drain time is up, with one line giving the count', async () => {
    const { streams, log } = await saturatedRouter(0.5);
    const t0 = performance.now();
    const cut = await router!.shutdown();
    const took = performance.now() - t0;
    expect(cut).toBe(3);
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(2000);
    expect(await Promise.all(streams)).toEqual(['cut', 'cut', 'cut']);
    expect(cutLines(log)).toEqual([
      { level: 'warn', msg: 'drain time is up: cutting in-flight requests', fields: expect.objectContaining({ cut: 3, drain_s: 0.5 }) },
    ]);
    expect(router!.inflight).toBe(0);
  });

  it('keeps the listener open through the readiness pause: /readyz 503, new generations 503 shutting_down with connection: close', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { shutdownDrainSecs: 0.6 });
    const stopping = router.shutdown();
    const ready = await rawRequest(`${router.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'draining' });
    const r = await rawRequest(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(r.status).toBe(503);
    expect(r.headers['x-router-error-code']).toBe('shutting_down');
    expect(r.headers.connection).toBe('close');
    expect(r.json()).toMatchObject({ error: { type: 'server_error', code: 'shutting_down' } });
    expect(await stopping).toBe(0);
    await expect(rawRequest(`${router.url}/healthz`)).rejects.toThrow();
  });

  it('skipPause: closes the listener at once and ends as soon as the in-flight requests finished (clean: 0)', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 1 });
    router = await startTestRouter(fleet.urls, { shutdownDrainSecs: 30 });
    const streams = [longStream(router.url, 60), longStream(router.url, 60)];
    for (let i = 0; i < 100 && router.inflight < 2; i++) await new Promise((r) => setTimeout(r, 20));
    const t0 = performance.now();
    expect(await router.shutdown({ skipPause: Promise.resolve() })).toBe(0);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(await Promise.all(streams)).toEqual(['done', 'done']);
  });

  it('an idle router stops at the end of the readiness pause, not at the drain ceiling', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { shutdownDrainSecs: 30, shutdownReadinessSecs: 0.5 });
    const t0 = performance.now();
    const stopping = router.shutdown();
    // During the pause the listener is open and /readyz says draining.
    expect((await rawRequest(`${router.url}/readyz`)).status).toBe(503);
    expect(await stopping).toBe(0);
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(10_000);
  });

  it('with streams in flight, it stops when the last one ends, after the pause and before the ceiling, cutting none', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 1 });
    router = await startTestRouter(fleet.urls, { shutdownDrainSecs: 30, shutdownReadinessSecs: 0.3 });
    const streams = [longStream(router.url, 200), longStream(router.url, 400)];
    for (let i = 0; i < 100 && router.inflight < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(router.inflight).toBe(2);
    let ended = 0;
    void streams[1]!.then(() => (ended = performance.now()));
    expect(await router.shutdown()).toBe(0);
    const stopped = performance.now();
    expect(await Promise.all(streams)).toEqual(['done', 'done']);
    // It waited for the longer stream (cutting none, above), then stopped at once: the two ends are
    // moments apart, in either order (the client reads the last bytes as the router counts it done).
    expect(Math.abs(stopped - ended)).toBeLessThan(1500);
  });

  it('cutNow cuts at once, whatever the drain time', async () => {
    const { streams, log } = await saturatedRouter(30, 2);
    let cutNow!: () => void;
    const stopping = router!.shutdown({ cutNow: new Promise<void>((r) => (cutNow = r)) });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    cutNow();
    expect(await stopping).toBe(2);
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(await Promise.all(streams)).toEqual(['cut', 'cut']);
    expect(cutLines(log)).toHaveLength(1);
    expect(cutLines(log)[0]!.msg).toBe('second stop request: cutting in-flight requests');
  });

  it('--shutdown-drain-secs 0 stops at once', async () => {
    const { streams } = await saturatedRouter(0, 1);
    const t0 = performance.now();
    expect(await router!.shutdown()).toBe(1);
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(await Promise.all(streams)).toEqual(['cut']);
  });
});

describe('StopSignals: first drains, second cuts', () => {
  it('resolves first, then second on a second request from the same source; later ones are no-ops', async () => {
    const s = new StopSignals();
    let second = false;
    void s.second.then(() => (second = true));
    s.request('SIGTERM');
    expect(await s.first).toEqual({ signal: 'SIGTERM', source: 'signal' });
    s.request('SIGINT', 'console');
    await Promise.resolve();
    expect(second).toBe(false); // the same stop, forwarded by a parent: not a second one
    s.request('SIGINT');
    expect(await s.second).toEqual({ signal: 'SIGINT', source: 'signal' });
    expect(s.cut).toBe(true);
    s.request('SIGTERM');
    expect(s.started).toEqual({ signal: 'SIGTERM', source: 'signal' });
  });

  it('maps a forced stop to 128 + the first signal number, a clean one to 0', () => {
    expect(signalExitStatus('SIGTERM')).toBe(143);
    expect(signalExitStatus('SIGINT')).toBe(130);
    expect(signalExitStatus('SIGHUP')).toBe(129);
    const s = new StopSignals();
    expect(s.exitStatus(true)).toBe(0); // never asked to stop
    s.request('SIGINT', 'keys');
    expect(s.exitStatus(false)).toBe(0);
    expect(s.exitStatus(true)).toBe(130);
  });

  it('listens to process signals and lets go of them', async () => {
    const others = process.listenerCount('SIGHUP');
    const s = new StopSignals().listen(['SIGHUP']);
    expect(process.listenerCount('SIGHUP')).toBe(others + 1);
    // Delivered as an event only when nobody else in this worker listens to it.
    if (others === 0) {
      process.emit('SIGHUP', 'SIGHUP');
      expect((await s.first).signal).toBe('SIGHUP');
    }
    s.dispose();
    expect(process.listenerCount('SIGHUP')).toBe(others);
  });
});

describe("the console's router process obeys the same ceiling", () => {
  // The built child (npm test builds first): RouterProcess forks dist/src/serve/router-child.js.
  const load = async () => (await import('../../dist/src/serve/router-process.js')) as typeof import('../../src/serve/router-process.js');

  async function startChild(drainSecs: number) {
    const { RouterProcess } = await load();
    fleet = await startSimFleet({ workers: 1, portBase: 0, speedup: 1 });
    const rp = await RouterProcess.start({
      ...defaultConfig(),
      host: '127.0.0.1',
      port: 0,
      workerUrls: fleet.urls,
      shutdownDrainSecs: drainSecs,
      tui: false,
      logFormat: 'json',
    });
    const streams = [longStream(rp.url), longStream(rp.url)];
    for (let i = 0; i < 100; i++) {
      const s = (await rawRequest(`${rp.url}/admin/state`)).json() as { workers: Array<{ inflight: number }> };
      if (s.workers[0]!.inflight >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return { rp, streams };
  }

  it('a stop drains for at most the drain time, then the child exits 143 and the console reports it', async () => {
    const { rp, streams } = await startChild(1);
    const t0 = performance.now();
    rp.stop('SIGTERM');
    // systemd's control-group kill: the same SIGTERM reaches the child directly. One stop, not a cut.
    process.kill(rp.get().pid!, 'SIGTERM');
    const { code } = await rp.exited;
    const took = performance.now() - t0;
    expect(code).toBe(143);
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(3000);
    expect(rp.get().crashed).toBe(false);
    expect(rp.exitStatus()).toBe(143);
    expect(await Promise.all(streams)).toEqual(['cut', 'cut']);
    expect(rp.get().log.join('\n')).toMatch(/"msg":"drain time is up: cutting in-flight requests".*"cut":2/);
  });

  it('a second stop cuts at once; the console q counts as SIGINT (130)', async () => {
    const { rp, streams } = await startChild(30);
    rp.stop('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    rp.stop('SIGINT');
    const { code } = await rp.exited;
    // "At once" against a 30 s drain: the child's bounded cleanup, on a busy 2-core machine.
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(code).toBe(130);
    expect(rp.exitStatus()).toBe(130);
    expect(await Promise.all(streams)).toEqual(['cut', 'cut']);
  });
});
