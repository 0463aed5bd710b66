import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { DEFAULT_ENGINE_PARAMS, EngineServer, RealClock, SimEngine, startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import { eventually, getJson, post, put } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

const model = 'sim-llama-3.1-8b';
let fleet: SimFleet | undefined;
let router: Router | undefined;
const extra: EngineServer[] = [];
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  await Promise.all(extra.splice(0).map((s) => s.close()));
  router = fleet = undefined;
});

/** Stream a chat completion and report what the client saw. */
async function stream(
  url: string,
  maxTokens: number,
  content = 'fault test',
  onStart?: () => void,
): Promise<{ status: number; tokens: number; errorEvent: boolean }> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: maxTokens, ignore_eos: true, stream: true }),
  });
  // The head comes with the stream's first bytes: from here the client has a stream that can only be cut.
  onStart?.();
  let text = '';
  try {
    for await (const c of res.body) text += (c as Buffer).toString();
  } catch {
    // a cut connection is what the assertion below looks at
  }
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
  return {
    status: res.statusCode,
    tokens: events.filter(
      (e) => e !== '[DONE]' && (JSON.parse(e) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content,
    ).length,
    errorEvent: events.some((e) => e.includes('"error"')),
  };
}

describe('faults', () => {
  it('an engine killed mid-run: its streams end cleanly, new requests go elsewhere, the breaker opens, the worker comes back', async () => {
    fleet = await startSimFleet({ workers: 3, portBase: 0, speedup: 5 });
    router = await startTestRouter(fleet.urls, { policy: 'round_robin', cbThreshold: 1, cbCoolDownSecs: 1 });
    const victim = fleet.servers[0]!;
    const victimUrl = victim.url;
    let started = 0;
    const inflight = Array.from({ length: 6 }, (_, i) => stream(router!.url, 400, `long ${i}`, () => started++));
    // Every stream under way at the client: a kill now cuts streams, not requests a retry could still serve.
    await eventually(async () => started === 6 && router!.state().workers.every((w) => w.inflight > 0));
    await victim.close();
    const results = await Promise.all(inflight);
    const cut = results.filter((r) => r.tokens < 400);
    expect(cut.length).toBeGreaterThan(0);
    for (const r of cut) expect(r.errorEvent).toBe(true); // told in-band, not a silent truncation
    for (const r of results.filter((x) => x.tokens === 400)) expect(r.errorEvent).toBe(false);

    // New requests all succeed: a refused connection is retried on another worker.
    for (let i = 0; i < 9; i++)
      expect(
        (await post(`${router.url}/v1/chat/completions`, { messages: [{ role: 'user', content: `after ${i}` }], max_tokens: 2 })).status,
      ).toBe(200);
    expect(router.state().workers.find((w) => w.url === victimUrl)!.breaker).toBe('open');

    // The engine comes back on the same port; after the cool-down a probe closes the breaker.
    const engine = new SimEngine({
      flavor: 'sglang',
      model,
      dpSize: 1,
      params: { ...DEFAULT_ENGINE_PARAMS, speedup: 5 },
      seed: 9,
      clock: new RealClock(),
    });
    const revived = new EngineServer(engine);
    extra.push(revived);
    await revived.listen('127.0.0.1', Number(new URL(victimUrl).port));
    await eventually(
      async () => {
        await post(`${router!.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'probe' }], max_tokens: 1 });
        return router!.state().workers.find((w) => w.url === victimUrl)!.breaker === 'closed';
      },
      8000,
      100,
    );
    expect(router.inflight).toBe(0);
  });

  it('a load endpoint answering garbage or hanging: that sample is absent, traffic continues', async () => {
    fleet = await startSimFleet({ workers: 3, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { workerQueueLimit: 4 });
    const [garbage, hanging, healthy] = fleet.urls as [string, string, string];
    await eventually(async () => router!.state().workers.every((w) => w.fresh));
    await put(`${garbage}/sim/config`, { load_fault: 'garbage' });
    await put(`${hanging}/sim/config`, { load_fault: 'hang' });
    await eventually(async () => {
      const ws = router!.state().workers;
      const by = (u: string) => ws.find((w) => w.url === u)!;
      return !by(garbage).fresh && by(garbage).waiting === null && !by(hanging).fresh && by(healthy).fresh;
    }, 8000);
    for (let i = 0; i < 20; i++) {
      expect(
        (await post(`${router.url}/v1/chat/completions`, { messages: [{ role: 'user', content: `continue ${i}` }], max_tokens: 2 })).status,
      ).toBe(200);
    }
    const by = (u: string) => router!.state().workers.find((w) => w.url === u)!;
    // Garbage is still an answer: that engine stays in the pool. Unanswered (hanging)
    // polls take the other out until it answers again (docs/engine-load.md, "Unanswered polls").
    expect(by(garbage)).toMatchObject({ healthy: true, load_unreachable: false });
    expect(by(healthy).healthy).toBe(true);
    expect(by(hanging)).toMatchObject({ healthy: false, load_unreachable: true });
    expect(by(garbage).requests_total + by(healthy).requests_total).toBe(20);
    expect(by(hanging).requests_total).toBe(0);
  });

  it('failure_rate 0.3 on one engine: retries keep client errors at the unretryable share', async () => {
    fleet = await startSimFleet({ workers: 3, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { policy: 'round_robin', cbThreshold: 5, cbCoolDownSecs: 1 });
    const flaky = fleet.urls[0]!;
    await put(`${flaky}/sim/config`, { failure_rate: 0.3 });
    const N = 300;
    let clientErrors = 0;
    for (let batch = 0; batch < N / 30; batch++) {
      const rs = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          post(`${router!.url}/v1/chat/completions`, { messages: [{ role: 'user', content: `r${batch}-${i}` }], max_tokens: 1 }),
        ),
      );
      clientErrors += rs.filter((r) => r.status !== 200).length;
    }
    const metrics = await request(`${router.url}/metrics`).then((r) => r.body.text());
    const retries = [...metrics.matchAll(/^sgl_router_retries_total\{reason="([^"]+)"\} (\d+)/gm)].reduce((a, m) => a + Number(m[2]), 0);
    const flakyFailures = [
      ...metrics.matchAll(
        /^sgl_router_worker_requests_total\{worker_url="([^"]+)",model_id="[^"]+",mode="plain",outcome="error"\} (\d+)/gm,
      ),
    ]
      .filter((m) => m[1] === flaky)
      .reduce((a, m) => a + Number(m[2]), 0);
    // Every injected failure happened before a byte reached the client, and the retry
    // went to a healthy engine: nothing was unretryable, so no client saw an error.
    console.log(
      `failure_rate 0.3 on 1 of 3 engines, ${N} requests: engine failures ${flakyFailures}, retries ${retries}, client errors ${clientErrors} (${((100 * clientErrors) / N).toFixed(1)}%)`,
    );
    expect(flakyFailures).toBeGreaterThan(0);
    expect(retries).toBeGreaterThanOrEqual(flakyFailures);
    expect(clientErrors).toBe(0);
    expect(router.inflight).toBe(0);
    const sim = (await getJson(`${flaky}/sim/config`)) as { failure_rate: number };
    expect(sim.failure_rate).toBe(0.3);
  });
});
