import { afterEach, describe, expect, it } from 'vitest';
import { TrafficDriver, Workload } from '../../src/workload/index.js';
import type { RequestResult } from '../../src/workload/index.js';
import { startFakeOpenAi } from '../bench/fake-openai.js';
import type { FakeServer } from '../bench/fake-openai.js';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(mode: Parameters<typeof startFakeOpenAi>[0]): Promise<FakeServer> {
  const s = await startFakeOpenAi(mode);
  servers.push(s);
  return s;
}

const quiet = { burstFactor: 1, burstSeconds: 0, burstEverySeconds: 0 };

describe('TrafficDriver', () => {
  it('streams every request and records TTFT, inter-token gaps, usage and cached tokens', async () => {
    const server = await fake({ kind: 'stream', reply: 'a b c d e', tokenDelayMs: 5, cachedTokens: 64 });
    const results: RequestResult[] = [];
    const driver = new TrafficDriver(new Workload({ seed: 1, rate: 20, ...quiet }), {
      url: server.url,
      model: 'm',
      onResult: (r) => results.push(r),
    });
    await driver.runFor(500, 2000);
    expect(results.length).toBeGreaterThan(3);
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.error).toBeUndefined();
      expect(r.ttftMs).toBeGreaterThan(0);
      expect(r.itlMs).toHaveLength(4);
      expect(r.latencyMs).toBeGreaterThanOrEqual(r.ttftMs!);
      expect(r.promptTokens).toBe(100);
      expect(r.cachedTokens).toBe(64);
      expect(r.completionTokens).toBe(5);
    }
    for (const b of server.bodies) {
      expect(b.model).toBe('m');
      expect(b).toMatchObject({ stream: true, stream_options: { include_usage: true }, ignore_eos: true });
    }
    expect(driver.counts()).toMatchObject({ sent: results.length, ok: results.length, failed: 0, inflight: 0 });
  });

  it("carries each session's conversation forward: turn n's prompt extends turn n-1's with its reply", async () => {
    const server = await fake({ kind: 'stream', reply: 'noted and done', tokenDelayMs: 1 });
    const workload = new Workload({ seed: 2, rate: 40, sessions: 3, maxTurns: 4, ...quiet });
    const driver = new TrafficDriver(workload, { url: server.url });
    await driver.runFor(1500, 2000);
    const bySession = new Map<string, typeof server.bodies>();
    for (const b of server.bodies) {
      const key = b.messages[0]!.content + '|' + b.messages[1]!.content;
      bySession.set(key, [...(bySession.get(key) ?? []), b]);
    }
    let multiTurn = 0;
    for (const bodies of bySession.values()) {
      expect(bodies[0]!.messages[0]!.role).toBe('system');
      for (let i = 1; i < bodies.length; i++) {
        const prev = bodies[i - 1]!.messages;
        const cur = bodies[i]!.messages;
        // Everything the previous turn sent, then its reply, then the new user message.
        expect(cur.slice(0, prev.length)).toEqual(prev);
        expect(cur[prev.length]).toEqual({ role: 'assistant', content: 'noted and done' });
        expect(cur[prev.length + 1]!.role).toBe('user');
        multiTurn++;
      }
    }
    expect(multiTurn).toBeGreaterThan(5);
  });

  it('holds a turn while the previous one of its session runs, and counts it', async () => {
    // Slow replies and one open session: every later turn arrives while the previous is running.
    const server = await fake({ kind: 'stream', reply: 'w w w w w w w w w w', tokenDelayMs: 30 });
    const results: RequestResult[] = [];
    const driver = new TrafficDriver(new Workload({ seed: 3, rate: 30, sessions: 1, maxTurns: 4, ...quiet }), {
      url: server.url,
      onResult: (r) => results.push(r),
    });
    await driver.runFor(600, 3000);
    const c = driver.counts();
    expect(c.held).toBeGreaterThan(0);
    expect(results.some((r) => r.heldMs > 0)).toBe(true);
    // Never two turns of one session at once.
    const sorted = [...results].sort((a, b) => a.startedAt - b.startedAt);
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1]!;
      if (prev.session === sorted[i]!.session) expect(sorted[i]!.startedAt).toBeGreaterThanOrEqual(prev.startedAt + prev.latencyMs - 1);
    }
  });

  it('reports error statuses with the router error code', async () => {
    const server = await fake({ kind: 'status', status: 503, code: 'policy_selection_failed' });
    const results: RequestResult[] = [];
    const driver = new TrafficDriver(new Workload({ seed: 4, rate: 30, ...quiet }), { url: server.url, onResult: (r) => results.push(r) });
    await driver.runFor(300, 1000);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r).toMatchObject({ status: 503, error: 'policy_selection_failed', ttftMs: undefined });
  });

  it('against a stalled server, ends within duration + grace and reports the stragglers as cut_at_end', async () => {
    const server = await fake({ kind: 'stall' });
    const results: RequestResult[] = [];
    const driver = new TrafficDriver(new Workload({ seed: 5, rate: 30, ...quiet }), { url: server.url, onResult: (r) => results.push(r) });
    const t0 = performance.now();
    await driver.runFor(400, 300);
    const elapsed = performance.now() - t0;
    expect(elapsed).toBeLessThan(400 + 300 + 1000);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r).toMatchObject({ status: 0, error: 'cut_at_end' });
    const c = driver.counts();
    expect(c.inflight).toBe(0);
    expect(c.dispatched).toBe(c.sent + c.shed + c.unsent);
  });

  it('times a request out on its own limit', async () => {
    const server = await fake({ kind: 'stall' });
    const results: RequestResult[] = [];
    const driver = new TrafficDriver(new Workload({ seed: 6, rate: 10, ...quiet }), {
      url: server.url,
      requestTimeoutMs: 100,
      onResult: (r) => results.push(r),
    });
    await driver.runFor(300, 1000);
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((r) => r.error === 'timeout' && r.status === 0)).toBe(true);
  });

  it('sheds arrivals beyond max in flight', async () => {
    const server = await fake({ kind: 'stall' });
    const driver = new TrafficDriver(new Workload({ seed: 7, rate: 100, sessions: 200, ...quiet }), { url: server.url, maxInFlight: 3 });
    await driver.runFor(300, 100);
    const c = driver.counts();
    expect(c.sent).toBe(3);
    expect(c.shed).toBeGreaterThan(0);
  });

  it('reports a refused connection as a transport error with status 0', async () => {
    const server = await fake({ kind: 'stall' });
    const url = server.url;
    await servers.pop()!.close();
    const results: RequestResult[] = [];
    const driver = new TrafficDriver(new Workload({ seed: 8, rate: 20, ...quiet }), { url, onResult: (r) => results.push(r) });
    await driver.runFor(300, 500);
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((r) => r.status === 0 && r.error === 'ECONNREFUSED')).toBe(true);
  });

  it('dispatches exactly the arrivals before the horizon, whatever the server does', async () => {
    const a = await fake({ kind: 'stream', tokenDelayMs: 1 });
    const b = await fake({ kind: 'status', status: 500 });
    const runs = [a, b].map((s) => new TrafficDriver(new Workload({ seed: 9, rate: 50 }), { url: s.url }));
    await Promise.all(runs.map((d) => d.runFor(700, 1000)));
    expect(runs[0]!.digest.count).toBeGreaterThan(10);
    expect(runs[1]!.digest.count).toBe(runs[0]!.digest.count);
    expect(runs[1]!.digest.hex()).toBe(runs[0]!.digest.hex());
  });
});
