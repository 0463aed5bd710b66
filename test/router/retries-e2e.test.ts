/**
 * Retries go through the ladder (docs/retries-and-breaker.md), end to end: real sim
 * engines, the real router, the official openai client. The prefix owner fails with
 * a 500; the retry is a fresh selection without it, under the same queue gate, so it
 * never lands on a gated worker while an unqueued one exists; the decision is booked
 * once; and the failed owner is not recorded as owning the request's new blocks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import type { Router } from '../../src/router/index.js';
import { parseInferenceRequest } from '../../src/router/request/inference-request.js';
import { parsePrometheusText, sumSamples } from '../../src/prometheus/index.js';
import { eventually, put, rawRequest } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

const model = 'sim-llama-3.1-8b';
const LIMIT = 4;
// ~1,500 estimated tokens: clears the default 1,024-token affinity minimum.
const system = (tag: string) => `${tag} `.repeat(3).concat('Shared operations runbook. '.repeat(230));

let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = fleet = undefined;
});

type Messages = Array<{ role: 'system' | 'user'; content: string }>;

async function counters(r: Router) {
  const m = parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text);
  return {
    decisions: sumSamples(m.get('sgl_router_cache_aware_decisions_total')) ?? 0,
    queuedDecisions: sumSamples(m.get('sgl_router_cache_aware_decisions_total'), (l) => l.decision === 'cache_worker_queued') ?? 0,
    retries500: sumSamples(m.get('sgl_router_retries_total'), (l) => l.reason === 'status_500') ?? 0,
    gateRejected: (w: string) => sumSamples(m.get('sgl_router_queue_gate_rejected_total'), (l) => l.worker === w) ?? 0,
  };
}

/** requests_total per worker URL (attempts sent to it). */
const attempts = (r: Router): Map<string, number> => new Map(r.state().workers.map((w) => [w.url, w.requests_total]));

/** Pin engines' reported waiting counts and wait until the router has sampled them. */
async function pin(r: Router, waiting: Record<string, number | null>): Promise<void> {
  for (const [url, n] of Object.entries(waiting)) expect((await put(`${url}/sim/load`, { num_waiting_reqs: n })).status).toBe(200);
  await eventually(async () =>
    r.state().workers.every((w) => !(w.url in waiting) || (waiting[w.url] === null ? w.waiting === 0 : w.waiting === waiting[w.url])),
  );
}

/** The workers whose attempt count moved across `fn`. */
async function attemptedBy(r: Router, fn: () => Promise<unknown>): Promise<string[]> {
  const before = attempts(r);
  await fn();
  return [...attempts(r)].filter(([u, n]) => n > before.get(u)!).map(([u]) => u);
}

/** Matched depth per worker URL for these messages, read from the router's prefix index. */
function ownerDepths(r: Router, messages: Messages): { blocks: number; depth: (url: string) => number } {
  const hashes = parseInferenceRequest('chat', Buffer.from(JSON.stringify({ messages })), {
    by: 'text',
    blockSize: r.config.blockSize,
  }).prefixHashes;
  const buf = r.index.newMatchBuffer();
  const n = r.index.match(hashes, buf);
  const depths = new Map<string, number>();
  for (let i = 0; i < n; i++) depths.set(r.registry.bySlotIndex(buf.slots[i]!)!.url, buf.depths[i]!);
  return { blocks: hashes.length, depth: (url) => depths.get(url) ?? 0 };
}

describe('a retry is a fresh selection through the ladder', () => {
  it('after a 500 from the owner: never a gated worker while an unqueued one exists; booked once; the owner not recorded', async () => {
    fleet = await startSimFleet({ workers: 4, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { workerQueueLimit: LIMIT });
    const r = router;
    const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const chat = (messages: Messages, stream = false) =>
      stream
        ? client.chat.completions.create({ model, messages, max_tokens: 3, stream: true }).then(async (s) => {
            let text = '';
            for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
            return text;
          })
        : client.chat.completions.create({ model, messages, max_tokens: 3 }).then((c) => c.choices[0]?.message.content ?? '');

    for (let round = 0; round < 3; round++) {
      const base: Messages = [
        { role: 'system', content: system(`round ${round}`) },
        { role: 'user', content: 'go' },
      ];
      // Two owners of the base prefix: the first by cache miss, the second by diverting off it.
      const [owner] = await attemptedBy(r, () => chat(base));
      await pin(r, { [owner!]: LIMIT });
      const [coOwner] = await attemptedBy(r, () => chat(base));
      expect(coOwner).not.toBe(owner);
      await pin(r, { [owner!]: null });
      // The co-owner and one more worker queue at the limit; one worker stays unqueued.
      const others = fleet.urls.filter((u) => u !== owner && u !== coOwner);
      const [gatedOther, unqueued] = others as [string, string];
      await pin(r, { [coOwner!]: LIMIT + 1, [gatedOther]: LIMIT + 2 });
      expect((await put(`${owner}/sim/config`, { failure_rate: 1 })).status).toBe(200);

      const deeper: Messages = [
        base[0]!,
        { role: 'user', content: `go deeper, round ${round}: ${'more detail for this question. '.repeat(40)}` },
      ];
      const before = await counters(r);
      const served = await attemptedBy(r, async () => expect(await chat(deeper, round === 1)).not.toBe(''));
      const after = await counters(r);

      // The owner won the booked selection and failed; the retry skipped both gated workers.
      expect(served.sort()).toEqual([owner, unqueued].sort());
      expect(after.retries500 - before.retries500).toBe(1);
      expect(after.decisions - before.decisions).toBe(1); // booked once, at the first selection
      expect(after.queuedDecisions - before.queuedDecisions).toBe(0); // the retry's own decision is not booked
      expect(after.gateRejected(coOwner!) - before.gateRejected(coOwner!)).toBe(1); // by the first selection only

      // The index lists the worker that served the whole prompt, not the owner that failed it.
      const idx = ownerDepths(r, deeper);
      expect(idx.depth(unqueued)).toBe(idx.blocks);
      expect(idx.depth(owner!)).toBeGreaterThan(0); // it still owns the base it served earlier
      expect(idx.depth(owner!)).toBeLessThan(idx.blocks);

      await put(`${owner}/sim/config`, { failure_rate: 0 });
      await pin(r, { [coOwner!]: null, [gatedOther]: null });
    }
    expect(r.inflight).toBe(0);
  });

  it('a refused connection is retried the same way, and a cut-off owner is not recorded either', async () => {
    fleet = await startSimFleet({ workers: 3, portBase: 0, speedup: 50 });
    router = await startTestRouter(fleet.urls, { workerQueueLimit: LIMIT });
    const r = router;
    const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const base: Messages = [
      { role: 'system', content: system('refused') },
      { role: 'user', content: 'go' },
    ];
    const [owner] = await attemptedBy(r, () => client.chat.completions.create({ model, messages: base, max_tokens: 2 }));
    const [gated, unqueued] = fleet.urls.filter((u) => u !== owner) as [string, string];
    await pin(r, { [gated]: LIMIT });
    await fleet.servers.find((s) => s.url === owner)!.close();

    const m0 = parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text);
    const deeper: Messages = [base[0]!, { role: 'user', content: `and now ${'something longer. '.repeat(40)}` }];
    const served = await attemptedBy(r, () => client.chat.completions.create({ model, messages: deeper, max_tokens: 2 }));
    expect(served.sort()).toEqual([owner, unqueued].sort());
    const m1 = parsePrometheusText((await rawRequest(`${r.url}/metrics`)).text);
    const connect = (m: typeof m0) => sumSamples(m.get('sgl_router_retries_total'), (l) => l.reason === 'connect') ?? 0;
    expect(connect(m1) - connect(m0)).toBe(1);
    const idx = ownerDepths(r, deeper);
    expect(idx.depth(unqueued)).toBe(idx.blocks);
    expect(idx.depth(owner!)).toBeLessThan(idx.blocks);
  });
});
