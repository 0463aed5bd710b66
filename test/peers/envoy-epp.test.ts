import OpenAI from 'openai';
import { afterEach, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import type { RunningCli } from '../helpers/cli.js';
import { startEnvoy } from '../helpers/envoy.js';
import type { Envoy, GatewayConfig } from '../helpers/envoy.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { chat, direct, startRoutedFleet, warm } from '../helpers/llm-d-fleet.js';
import type { LlmdSim, LlmdSimOptions } from '../helpers/llm-d-sim.js';
import { adminState, decisionOf, freePort } from '../helpers/peer-router.js';
import { describeWithPeers } from '../helpers/peers.js';

/**
 * routerctl as the endpoint picker (serve --epp) behind a real Envoy running the
 * configurations deploy/envoy keeps, over real llm-d-inference-sim engines
 * (docs/endpoint-picker.md). Envoy carries every byte; the picker only names the
 * engine. Where a request went is read from the engines' own request logs, how it was
 * booked from the picker's decision records (its x-request-id, added to the response
 * through Envoy), what the engine reused from its own usage.
 */
let sims: LlmdSim[] = [];
let routers: RunningCli[] = [];
let envoys: Envoy[] = [];

afterEach(async () => {
  for (const r of routers) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  await Promise.all([...sims.map((s) => s.close()), ...envoys.map((e) => e.close())]);
  sims = [];
  routers = [];
  envoys = [];
});

interface Gateway {
  /** The picker's admin URL (its --port): /admin/*, /metrics. */
  readonly url: string;
  readonly eppPort: number;
  readonly envoy: Envoy;
  /** The openai client, pointed at Envoy. */
  readonly client: OpenAI;
}

async function gateway(
  n: number,
  o: LlmdSimOptions,
  routerArgs: string[] = [],
  config: GatewayConfig = 'gateway-original-dst.yaml',
): Promise<Gateway> {
  const eppPort = await freePort();
  const started = await startRoutedFleet(n, o, ['--epp', String(eppPort), ...routerArgs]);
  sims = started.sims;
  routers.push(started.cli);
  const envoy = await startEnvoy(config, { eppPort, engines: sims.map((s) => s.url) });
  envoys.push(envoy);
  return { url: started.url, eppPort, envoy, client: new OpenAI({ baseURL: `${envoy.url}/v1`, apiKey: 'unused', maxRetries: 0 }) };
}

const waitingOf = async (url: string, sim: LlmdSim): Promise<number> =>
  (await adminState(url)).workers.find((w) => w.url === sim.url)!.waiting ?? -1;

/** Hold an engine: `n` requests sent to it directly, each generating for `tokens` × its inter-token latency. */
const hold = (sim: LlmdSim, tag: string, n: number, tokens: number): Array<Promise<unknown>> =>
  Array.from({ length: n }, (_, i) => direct(sim, chat(`${tag}${i}`, `mk-${tag}-${i}`), tokens).catch(() => undefined));

/** One chat through Envoy, streamed or not: its x-request-id, and the engine's cached tokens. */
async function ask(
  client: OpenAI,
  messages: OpenAI.Chat.ChatCompletionMessageParam[],
  stream: boolean,
): Promise<{ id: string | null; cached: number }> {
  if (!stream) {
    const { data, response } = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 1 }).withResponse();
    return { id: response.headers.get('x-request-id'), cached: data.usage?.prompt_tokens_details?.cached_tokens ?? -1 };
  }
  const { data, response } = await client.chat.completions
    .create({ model: 'tiny', messages, max_tokens: 3, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  let cached = -1;
  for await (const chunk of data) if (chunk.usage) cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? -1;
  return { id: response.headers.get('x-request-id'), cached };
}

describeWithPeers(['envoy', 'llm-d-inference-sim'], 'routerctl as the endpoint picker behind a real Envoy', () => {
  // The header half of the protocol (ORIGINAL_DST) and the envoy.lb metadata half (override_host: a STATIC cluster that would round-robin without the pick).
  for (const config of ['gateway-original-dst.yaml', 'gateway-override-host.yaml'] as const)
    it(`the gate through Envoy (${config}): the owner B, busier than A but under the limit, gets its prefix (cache_hit); at the limit the request goes to A (cache_worker_queued), streamed and not`, async () => {
      // One request runs at a time, 100 ms a token: a held request keeps an engine busy for seconds.
      const g = await gateway(2, { maxNumSeqs: 1, interTokenLatencyMs: 100 }, ['--worker-queue-limit', '3'], config);
      const [a, b] = sims as [LlmdSim, LlmdSim];
      for (const stream of [false, true]) {
        const tag = stream ? 'gate-s' : 'gate-n';
        await warm(g.url, b, tag, `mk-${tag}-warm`);
        // B busier than A, under the limit: one running, one waiting.
        const under = hold(b, `${tag}-u`, 2, 20);
        await eventually(async () => (await waitingOf(g.url, b)) === 1 && (await waitingOf(g.url, a)) === 0, 10_000, 20).catch(
          async (err: Error) => {
            throw new Error(`${err.message}: waiting A ${await waitingOf(g.url, a)}, B ${await waitingOf(g.url, b)}`);
          },
        );
        const hit = await ask(g.client, chat(tag, `mk-${tag}-1`), stream);
        expect(await decisionOf(g.url, hit.id)).toMatchObject({ decision: 'cache_hit', worker: b.url });
        expect([a.received(`mk-${tag}-1`), b.received(`mk-${tag}-1`)]).toEqual([0, 1]);
        // The engine's own word: it reused the prefix the router sent it for.
        expect(hit.cached).toBeGreaterThan(400);
        // B at the limit: one running, three waiting.
        const at = hold(b, `${tag}-a`, 4, 20);
        await eventually(async () => (await waitingOf(g.url, b)) >= 3, 10_000, 20);
        const diverted = await ask(g.client, chat(tag, `mk-${tag}-2`), stream);
        const rec = await decisionOf(g.url, diverted.id);
        expect(rec).toMatchObject({ decision: 'cache_worker_queued', worker: a.url, best_worker: b.url });
        expect(rec.candidates.find((c) => c.worker === b.url)).toMatchObject({ gate: 'gated' });
        expect([a.received(`mk-${tag}-2`), b.received(`mk-${tag}-2`)]).toEqual([1, 0]);
        expect(diverted.cached).toBe(0);
        await Promise.all([...under, ...at]);
      }
    }, 120_000);

  it('a 1 MB prompt and a streamed answer of 2,000 chunks pass through Envoy and the picker byte for byte', async () => {
    // Echo mode: the engine answers with the prompt's last message, token by token when streamed.
    const g = await gateway(2, { interTokenLatencyMs: 0, kvCacheSize: 30_000, extra: ['--mode', 'echo', '--max-model-len', '400000'] });
    const words = Array.from({ length: 200_000 }, (_, i) => `w${(i * 7919) % 100_003}`);
    const big = words.join(' ').slice(0, 1_000_000);
    expect(Buffer.byteLength(big)).toBe(1_000_000);
    const res = await g.client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: big }], max_tokens: 200_000 });
    expect(res.choices[0]!.message.content).toBe(big);

    const text = words.slice(0, 2_000).join(' ');
    const stream = await g.client.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: text }],
      max_tokens: 4_000,
      stream: true,
    });
    let chunks = 0;
    let joined = '';
    for await (const c of stream) {
      const d = c.choices[0]?.delta.content;
      if (d) {
        chunks++;
        joined += d;
      }
    }
    expect(chunks).toBeGreaterThanOrEqual(2_000);
    expect(joined).toBe(text);
    // Both were booked as the picker saw them end.
    const st = await adminState(g.url);
    expect(st.workers.reduce((n, w) => n + w.inflight, 0)).toBe(0);
  }, 120_000);

  it("every engine down: Envoy answers 503 with routerctl's error code; a request that may be shed, with every engine queued, gets 429 and Retry-After", async () => {
    const g = await gateway(2, { maxNumSeqs: 1, interTokenLatencyMs: 100 }, ['--worker-queue-limit', '1']);
    // Every engine queued: one running, one waiting each.
    const held = sims.flatMap((s, i) => hold(s, `shed${i}`, 2, 20));
    await eventually(async () => (await adminState(g.url)).workers.every((w) => (w.waiting ?? 0) >= 1), 10_000, 20);
    const body = JSON.stringify({ model: 'tiny', messages: chat('shed', 'mk-shed-1'), max_tokens: 1 });
    const shed = await rawRequest(`${g.envoy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-routerctl-priority': '-1' },
      body,
    });
    expect(shed.status).toBe(429);
    expect(shed.headers['retry-after']).toBe('1');
    expect(shed.headers['x-router-error-code']).toBe('request_shed');
    expect(JSON.parse(shed.text)).toMatchObject({ error: { code: 'request_shed' } });
    expect(sims.map((s) => s.received('mk-shed-1'))).toEqual([0, 0]);
    // Without the header it is not shed: the whole fleet queued keeps affinity (all_queued).
    const kept = await g.client.chat.completions.create({ model: 'tiny', messages: chat('shed', 'mk-shed-2'), max_tokens: 1 });
    expect(kept.choices).toHaveLength(1);
    expect(sims.reduce((n, s) => n + s.received('mk-shed-2'), 0)).toBe(1);
    await Promise.all(held);
    const metrics = (await rawRequest(`${g.url}/metrics`)).text;
    expect(metrics).toMatch(/^sgl_router_shed_requests_total\{reason="saturated"\} 1$/m);

    await Promise.all(sims.map((s) => s.close()));
    await eventually(async () => (await rawRequest(`${g.url}/readyz`)).status === 503, 15_000, 50);
    const down = await rawRequest(`${g.envoy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(down.status).toBe(503);
    expect(down.headers['x-router-error-code']).toBe('no_healthy_workers');
    expect(JSON.parse(down.text)).toMatchObject({ error: { code: 'no_healthy_workers' } });
  }, 90_000);

  for (const config of ['gateway-original-dst.yaml', 'gateway-override-host.yaml'] as const) {
    const open = config === 'gateway-override-host.yaml';
    it(`the picker killed mid-load (${config}): ${open ? 'fail open, Envoy serves on by its fallback' : 'fail closed, Envoy answers 5xx'}; restarted, routing resumes; nothing hangs`, async () => {
      const g = await gateway(2, { interTokenLatencyMs: 1 }, [], config);
      const picker = routers[0]!;
      const seen: Array<{ at: number; status: number; picked: boolean }> = [];
      let stop = false;
      const loop = async (k: number): Promise<void> => {
        for (let i = 0; !stop; i++) {
          const body = JSON.stringify({ model: 'tiny', messages: chat('load', `mk-load-${k}-${i}`), max_tokens: 2 });
          // A request with no answer in 10 s hung: it is recorded as status -1 and fails the test.
          const r = await rawRequest(`${g.envoy.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
            timeoutMs: 10_000,
          }).catch((err: Error) => ({
            // -1: no answer in time (a hang); 0: the connection cut (a response in flight through the killed picker).
            status: /no answer/.test(err.message) ? -1 : 0,
            headers: {} as Record<string, string | string[] | undefined>,
          }));
          seen.push({ at: Date.now(), status: r.status, picked: r.headers['x-request-id'] !== undefined });
        }
      };
      const loops = [0, 1, 2, 3].map((k) => loop(k));
      await eventually(async () => seen.filter((s) => s.status === 200 && s.picked).length >= 20, 10_000, 20);
      const killedAt = Date.now();
      picker.child.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 2500));
      const whileDown = seen.filter((s) => s.at > killedAt + 1500);
      expect(whileDown.length).toBeGreaterThan(5);
      if (open) {
        // Served by the fallback: 200s that no picker booked.
        expect(whileDown.every((s) => s.status === 200 && !s.picked)).toBe(true);
      } else {
        expect(whileDown.every((s) => s.status >= 500)).toBe(true);
      }
      // The picker back on the same port: routing resumes through it.
      const again = startCli([
        ...['serve', '--no-tui', '--port', '0', '--worker-urls', ...sims.map((s) => s.url), '--epp', String(g.eppPort)],
        ...['--load-poll-interval-ms', '100'],
      ]);
      routers.push(again);
      const [url2] = await again.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m, 30_000);
      const restartedAt = Date.now();
      await eventually(async () => seen.filter((s) => s.at > restartedAt && s.status === 200 && s.picked).length >= 10, 15_000, 50);
      stop = true;
      await Promise.all(loops);
      expect(seen.filter((s) => s.status === -1)).toEqual([]);
      const last = seen.filter((s) => s.at > restartedAt).slice(-10);
      expect(last.every((s) => s.status === 200 && s.picked)).toBe(true);
      expect((await adminState(url2!)).workers.reduce((n, w) => n + w.requests_total, 0)).toBeGreaterThan(0);
    }, 90_000);
  }

  it('sustained load past HTTP/2 reset limits: 3,000 requests through Envoy, every one picked and answered 200', async () => {
    // Envoy closes each ext_proc stream when its request is over; a reset per request
    // would exhaust the picker's HTTP/2 reset budget (a burst of 1,000) and refuse streams.
    const g = await gateway(2, { interTokenLatencyMs: 0, prefillOverheadMs: 0, prefillTimePerTokenMs: 0, maxNumSeqs: 64 });
    const body = JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'one word' }], max_tokens: 1 });
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < 3000) {
        next++;
        const r = await rawRequest(`${g.envoy.url}/v1/chat/completions`, { method: 'POST', body, timeoutMs: 10_000 });
        const key = r.headers['x-request-id'] === undefined ? -r.status : r.status;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(Object.fromEntries(statuses)).toEqual({ 200: 3000 });
    const st = await adminState(g.url);
    expect(st.workers.reduce((n, w) => n + w.requests_total, 0)).toBe(3000);
  }, 120_000);

  it("top --url on the picker's admin port shows the live fleet and its decisions while Envoy carries the load", async () => {
    const g = await gateway(2, { interTokenLatencyMs: 1 });
    for (let i = 0; i < 6; i++)
      await g.client.chat.completions.create({ model: 'tiny', messages: chat(`top${i % 2}`, `mk-top-${i}`), max_tokens: 2 });
    const top = await runCli(['top', '--url', g.url, '--once', '--json']);
    expect(top.code, top.stderr).toBe(0);
    const doc = JSON.parse(top.stdout) as { workers: Array<{ url: string; requests_total: number }> };
    expect(doc.workers.map((w) => w.url).sort()).toEqual(sims.map((s) => s.url).sort());
    expect(doc.workers.reduce((n, w) => n + w.requests_total, 0)).toBe(6);
    const table = await runCli(['top', '--url', g.url, '--once']);
    expect(table.code, table.stderr).toBe(0);
    for (const s of sims) expect(table.stdout).toContain(new URL(s.url).host);
    const story = await runCli(['explain', '--url', g.url, '--once', '--json']);
    expect(story.code, story.stderr).toBe(0);
    expect(story.stdout.trim().split('\n')).toHaveLength(6);
    // doctor reads the engines' cached tokens the picker saw pass: the later requests of each prefix found it.
    const doctor = await runCli(['doctor', '--url', g.url, '--json']);
    expect(doctor.code, doctor.stderr).toBe(0);
    const breakdown = JSON.parse(doctor.stdout) as { requests: number; reportedCached: number };
    expect(breakdown.requests).toBe(6);
    expect(breakdown.reportedCached).toBeGreaterThan(0);
  }, 60_000);
});
