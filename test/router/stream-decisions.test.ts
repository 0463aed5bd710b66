/**
 * /admin/stream?decisions=1 carries at most the newest 200 decisions an event
 * (docs/decisions.md §Admin decisions): what a console keeps. Every record since the
 * last event was half a megabyte an event at a few thousand requests a second.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { SseParser } from '../../src/fleet/sse.js';
import type { SseEvent } from '../../src/fleet/sse.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { startTestRouter } from '../helpers/router.js';

let fleet: SimFleet | undefined;
let router: Router | undefined;
afterEach(async () => {
  await router?.close();
  await fleet?.close();
  router = fleet = undefined;
});

describe('decisions on the admin stream', () => {
  it('an event carries the newest 200 of 230 decisions, in order; the next carries only what came after', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 200 });
    const r = (router = await startTestRouter(fleet.urls));
    const chat = (i: number) =>
      request(`${r.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-llama-3.1-8b', messages: [{ role: 'user', content: `q${i}` }], max_tokens: 1 }),
      }).then((res) => res.body.text());
    for (let i = 0; i < 230; i += 10) await Promise.all(Array.from({ length: 10 }, (_, k) => chat(i + k)));

    const res = await request(`${r.url}/admin/stream?interval_ms=100&decisions=1`);
    const parser = new SseParser();
    const batches: Array<Array<{ seq: number }>> = [];
    let sentMore = false;
    for await (const chunk of res.body) {
      for (const ev of parser.push((chunk as Buffer).toString()) as SseEvent[]) {
        if (ev.event === 'decisions') batches.push(JSON.parse(ev.data) as Array<{ seq: number }>);
      }
      if (batches.length === 1 && !sentMore) {
        sentMore = true;
        await Promise.all(Array.from({ length: 5 }, (_, k) => chat(1000 + k)));
      }
      if (batches.length === 2) break;
    }
    res.body.destroy();
    const seqs = batches[0]!.map((d) => d.seq);
    expect(seqs).toHaveLength(200);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs[199]! - seqs[0]!).toBe(199);
    expect(batches[1]!.map((d) => d.seq)).toEqual([1, 2, 3, 4, 5].map((k) => seqs[199]! + k));
  });
});
