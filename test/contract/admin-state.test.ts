import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { auditAdminDocument } from '../../src/contract/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { snapshotFromAdmin } from '../../src/fleet/index.js';
import { startTestRouter } from '../helpers/router.js';

let fleet: SimFleet;
let router: Router;
beforeAll(async () => {
  fleet = await startSimFleet({ workers: 2, portBase: 0, speedup: 100 });
  router = await startTestRouter(fleet.urls, { workerQueueLimit: 4, saturationQueueFloor: 2 });
  const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'none' });
  for (let i = 0; i < 3; i++)
    await client.chat.completions.create({ model: 'sim-llama-3.1-8b', messages: [{ role: 'user', content: `hello ${i}` }], max_tokens: 2 });
  // One sample per worker, so the load fields are filled in rather than null.
  for (let i = 0; i < 50 && router.state().workers.some((w) => !w.fresh); i++) await new Promise((r) => setTimeout(r, 20));
});
afterAll(async () => {
  await router?.close();
  await fleet?.close();
});

async function fetchState(): Promise<unknown> {
  const res = await fetch(`${router.url}/admin/state`);
  expect(res.status).toBe(200);
  return res.json();
}

describe('the admin state contract, router to console', () => {
  it('a live router writes exactly the fields the contract names', async () => {
    expect(auditAdminDocument(await fetchState())).toEqual({ unknown: [], missing: [] });
  });

  it('an /admin/stream event carries the same document', async () => {
    const ctl = new AbortController();
    const res = await fetch(`${router.url}/admin/stream?interval_ms=100`, { signal: ctl.signal });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    ctl.abort();
    const data = text
      .split('\n')
      .find((l) => l.startsWith('data:'))!
      .slice(5)
      .trim();
    expect(auditAdminDocument(JSON.parse(data))).toEqual({ unknown: [], missing: [] });
  });

  it('the console reads every field it shows from it: nothing the router wrote comes out unknown', async () => {
    const doc = (await fetchState()) as { router: Record<string, unknown>; workers: Array<Record<string, unknown>> };
    const snap = snapshotFromAdmin(doc)!;
    expect(snap).toBeDefined();
    const nullsIn = (o: object) =>
      Object.entries(o)
        .filter(([, v]) => v === null)
        .map(([k]) => k);
    // The router knows every one of these (a floor is set), so none may come out unknown.
    expect(nullsIn(snap.router)).toEqual([]);
    expect(snap.router.blockSize).toBe(doc.router.block_size);
    for (const [i, w] of snap.workers.entries()) {
      // But the prefill rate, which a router that served nothing has not learnt: read, and null (cold).
      expect(
        nullsIn(w).filter((k) => k !== 'prefillTokensPerS'),
        `worker ${i}`,
      ).toEqual([]);
      expect(w.prefillTokensPerS).toBeNull();
    }
    expect(snap.decisions).not.toBeNull();
    expect(snap.diverted).not.toBeNull();
  });

  it('names what a document from another version adds or lacks', () => {
    expect(auditAdminDocument({ router: { version: 'x', extra: 1 }, workers: [{}], alerts: {} })).toMatchObject({
      unknown: ['router.extra'],
      missing: expect.arrayContaining(['decisions', 'router.policy', 'workers[0].url', 'alerts.all_queued']),
    });
  });
});
