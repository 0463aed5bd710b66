import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdminState } from '../../src/contract/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * Workers joining and leaving a running router through /admin/workers
 * (docs/http-edge.md §Membership), under steady streaming load from the official
 * OpenAI client: real simulated engines, the real router. What is checked is what a
 * client and an operator see: every stream ends whole, the new worker takes traffic
 * once it has answered, the removed one takes none and is gone from /admin/state and
 * /metrics, and each change is an event.
 */
const TOKEN = 'membership-secret';
const auth = { authorization: `Bearer ${TOKEN}` };

let fleets: SimFleet[] = [];
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  for (const f of fleets) await f.close();
  router = undefined;
  fleets = [];
});

async function sim(): Promise<string> {
  const f = await startSimFleet({ workers: 1, speedup: 20 });
  fleets.push(f);
  return f.urls[0]!;
}

const state = async (r: Router): Promise<AdminState> =>
  JSON.parse((await rawRequest(`${r.url}/admin/state`, { headers: auth })).text) as AdminState;
const post = (r: Router, body: string, headers: Record<string, string> = auth) =>
  rawRequest(`${r.url}/admin/workers`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
const del = (r: Router, url: string, headers: Record<string, string> = auth) =>
  rawRequest(`${r.url}/admin/workers?url=${encodeURIComponent(url)}`, { method: 'DELETE', headers });

describe('membership at runtime', () => {
  it('a worker added under load takes traffic once it answers; a removed one finishes its streams and is gone', async () => {
    const a = await sim();
    const b = await sim();
    const r = (router = await startTestRouter([a], { adminToken: TOKEN, policy: 'round_robin', shutdownDrainSecs: 10 }));
    const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'none', maxRetries: 0 });

    // Steady load: four streams at a time, each read to its end.
    let stop = false;
    const outcomes: Array<{ ok: boolean; chunks: number; finish: string | null; error?: string }> = [];
    const servedBy = new Map<string, number>();
    const one = async (i: number): Promise<void> => {
      try {
        const stream = await client.chat.completions.create({
          model: 'sim-llama-3.1-8b',
          messages: [{ role: 'user', content: `request ${i}: ${'keep talking '.repeat(20)}` }],
          max_tokens: 24,
          stream: true,
        });
        let chunks = 0;
        let finish: string | null = null;
        for await (const c of stream) {
          chunks++;
          finish = c.choices[0]?.finish_reason ?? finish;
        }
        outcomes.push({ ok: true, chunks, finish });
      } catch (err) {
        outcomes.push({ ok: false, chunks: 0, finish: null, error: (err as Error).message });
      }
    };
    let n = 0;
    const loops = Array.from({ length: 4 }, async () => {
      while (!stop) await one(n++);
    });
    const served = async (): Promise<void> => {
      for (const w of (await state(r)).workers) servedBy.set(w.url, w.requests_total);
    };

    await eventually(async () => outcomes.length >= 8);
    const added = await post(r, JSON.stringify({ url: b }));
    expect(added.status).toBe(201);
    expect(JSON.parse(added.text)).toEqual({ url: b, state: 'joining' });
    expect((await post(r, JSON.stringify({ url: b }))).status).toBe(409);
    await eventually(async () => {
      await served();
      return (servedBy.get(b) ?? 0) >= 4;
    });

    // A leaves while its streams are running: out of the pool at once, gone once they end.
    const before = outcomes.length;
    const removed = await del(r, a);
    expect(removed.status).toBe(200);
    const leaving = JSON.parse(removed.text) as { url: string; state: string; inflight: number };
    expect(leaving).toMatchObject({ url: a, state: 'leaving' });
    // Streams were running on it when it left: they are among the outcomes checked below.
    expect(leaving.inflight).toBeGreaterThan(0);
    await eventually(async () => (await state(r)).workers.every((w) => w.url !== a));
    const aTotal = servedBy.get(a) ?? 0;
    await eventually(async () => outcomes.length >= before + 12);
    stop = true;
    await Promise.all(loops);

    // Nothing lost: every stream the client started ended whole, with its finish reason.
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(outcomes.every((o) => o.chunks > 1 && o.finish !== null)).toBe(true);
    const s = await state(r);
    expect(s.workers.map((w) => w.url)).toEqual([b]);
    expect(aTotal).toBeGreaterThan(0);
    // The removed worker's series are gone from /metrics, the kept one's are there.
    const metrics = (await rawRequest(`${r.url}/metrics`)).text;
    expect(metrics.split('\n').filter((l) => l.includes(a))).toEqual([]);
    expect(s.events.map((e) => [e.kind, e.worker])).toEqual(
      expect.arrayContaining([
        ['worker_added', b],
        ['worker_admitted', b],
        ['worker_removed', a],
      ]),
    );
    expect((await del(r, a)).status).toBe(404);
  });

  it('a worker that stops answering and comes back at the same address (an engine restart) starts with no prefixes in the index', async () => {
    const a = await sim();
    const b = await sim();
    const r = (router = await startTestRouter([a, b], { decisionHeader: 'urls' }));
    const prompt = `restart ${'Shared operations runbook. '.repeat(230)}`;
    const send = async (id: string): Promise<{ worker: string; decision: string | null }> => {
      const res = await rawRequest(`${r.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'sim-llama-3.1-8b', messages: [{ role: 'user', content: prompt }], max_tokens: 2 }),
        headers: { 'x-request-id': id },
      });
      expect(res.status).toBe(200);
      const d = r.decisionsDoc({ requestId: id }).decisions.at(-1)!;
      return { worker: d.worker, decision: d.decision };
    };
    const first = await send('first');
    expect(await send('again')).toEqual({ worker: first.worker, decision: 'cache_hit' });

    // The owner's engine goes away and comes back on the same port, empty.
    const owner = fleets.find((f) => f.urls[0] === first.worker)!;
    const port = Number(new URL(first.worker).port);
    await owner.close();
    fleets.splice(fleets.indexOf(owner), 1);
    await eventually(async () => r.state().workers.find((w) => w.url === first.worker)!.load_unreachable, 10_000);
    fleets.push(await startSimFleet({ workers: 1, speedup: 20, portBase: port }));
    await eventually(async () => !r.state().workers.find((w) => w.url === first.worker)!.load_unreachable, 10_000);

    // The index no longer claims the restarted engine holds the prompt.
    expect((await send('after')).decision).toBe('cache_miss');
  });

  it('refuses every change without --admin-token, whatever the host, and rejects what is not a worker URL', async () => {
    const a = await sim();
    const open = (router = await startTestRouter([a]));
    const res = await post(open, JSON.stringify({ url: 'http://127.0.0.1:9' }), {});
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text).error.code).toBe('admin_token_required');
    expect((await del(open, a, {})).status).toBe(403);
    await open.close();

    const guarded = (router = await startTestRouter([a], { adminToken: TOKEN }));
    expect((await post(guarded, JSON.stringify({ url: 'http://127.0.0.1:9' }), {})).status).toBe(401);
    for (const body of ['not json', '{}', '{"url": "ftp://127.0.0.1:9"}', '{"url": "http://127.0.0.1:9/v1"}']) {
      const bad = await post(guarded, body);
      expect(bad.status, body).toBe(400);
      expect(JSON.parse(bad.text).error.code).toBe('bad_request');
    }
    expect((await state(guarded)).workers.map((w) => w.url)).toEqual([a]);
  });
});
