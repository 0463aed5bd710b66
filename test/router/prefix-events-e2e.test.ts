import { afterEach, describe, expect, it } from 'vitest';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually, post, put } from '../helpers/http.js';
import { predictionAgreement, settled } from '../helpers/kv-events.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * The prefix index built from the engines' KV events
 * (docs/routing.md §Prefix from engine events): real simulated engines publishing over ZMQ, the real router, and
 * the official OpenAI client on 127.0.0.1.
 */
let fleet: SimFleet | undefined;
const routers: Router[] = [];
afterEach(async () => {
  for (const r of routers.splice(0)) await r.close();
  await fleet?.close();
  fleet = undefined;
});

const BS = 16;
const pushing = { kvEvents: true, kvFormat: 'array' as const, loadPublish: true, topic: '' };

describe('prefix index from KV events', () => {
  it('predicts exactly the cached tokens the engine then reports, request after request', async () => {
    fleet = await startSimFleet({ workers: 3, speedup: 50, push: pushing });
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'events', workerQueueLimit: 6 });
    routers.push(r);
    expect(r.state().prefix_index.source).toBe('events');
    expect(r.state().workers.every((w) => w.kv_events !== null)).toBe(true);
    const total = 24;
    const { agree, hits } = await predictionAgreement(r, total, BS, 'sim');
    expect(agree).toBe(total);
    // 4 first sightings miss; by chance, 3 workers would hit about a third of the other 20.
    expect(hits).toBeGreaterThanOrEqual(10); // the index steered repeats to their owners
    const kv = r.state().workers.map((w) => w.kv_events!);
    expect(kv.every((k) => k.decode_errors_total === 0 && k.lost_total === 0)).toBe(true);
    expect(kv.reduce((a, k) => a + k.events_total, 0)).toBeGreaterThan(0);
  });

  it('forgets what an engine flushed (AllBlocksCleared)', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50, push: pushing });
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'events' });
    routers.push(r);
    expect(
      (await post(`${r.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hello there '.repeat(50) }], max_tokens: 2 }))
        .status,
    ).toBe(200);
    await eventually(async () => r.state().prefix_index.blocks > 0);
    expect((await post(`${fleet.urls[0]}/flush_cache`, {})).status).toBe(200);
    await eventually(async () => r.state().prefix_index.blocks === 0);
    expect(r.state().prefix_index.owner_pairs).toBe(0);
  });

  it('two replicas on the same engines agree on the index; built from requests they do not', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 50, push: pushing });
    const a = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'events' });
    const b = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'auto' });
    const plain = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'requests' });
    routers.push(a, b, plain);
    expect(b.state().prefix_index.source).toBe('events');
    expect(plain.state().prefix_index.source).toBe('requests');
    for (let k = 0; k < 12; k++) {
      const via = [a, plain][k % 2]!;
      await post(`${via.url}/v1/chat/completions`, { messages: [{ role: 'user', content: `topic ${k % 5} `.repeat(60) }], max_tokens: 2 });
    }
    await settled(a);
    await settled(b);
    const da = a.state().prefix_index;
    const db = b.state().prefix_index;
    expect(da.blocks).toBeGreaterThan(0);
    expect(db).toEqual(da);
    // The requests-built index only knows what went through its own router.
    expect(plain.state().prefix_index.digest).not.toBe(da.digest);
  });

  it('falls back to requests, and says why, when a worker cannot be keyed under auto', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 50 });
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'auto' });
    routers.push(r);
    expect(r.state().prefix_index.source).toBe('requests');
    expect(r.state().workers.every((w) => w.kv_events === null)).toBe(true);
  });
});

describe('prefix index from KV events: broken streams', () => {
  it('a gap is repaired from the replay socket: nothing lost, and both replicas that saw it end with the same index', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50, push: pushing });
    const a = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'events' });
    const b = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'events' });
    routers.push(a, b);
    const url = fleet.urls[0]!;
    await post(`${a.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'before the gap '.repeat(40) }], max_tokens: 2 });
    await settled(a);
    // Paused: the engine goes on numbering and storing batches, but sends none.
    expect((await put(`${url}/sim/push`, { kv_events: 'paused' })).status).toBe(200);
    for (let k = 0; k < 3; k++)
      await post(`${a.url}/v1/chat/completions`, {
        messages: [{ role: 'user', content: `during the gap ${k} `.repeat(40) }],
        max_tokens: 2,
      });
    expect((await put(`${url}/sim/push`, { kv_events: 'live' })).status).toBe(200);
    await post(`${a.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'after the gap '.repeat(40) }], max_tokens: 2 });
    await eventually(async () => a.state().workers[0]!.kv_events!.gaps_total === 1 && a.state().workers[0]!.kv_events!.repaired_total > 0);
    await settled(a);
    await settled(b);
    const kv = a.state().workers[0]!.kv_events!;
    expect(kv).toMatchObject({ gaps_total: 1, lost_total: 0 });
    expect(kv.repaired_total).toBe(kv.missed_total);
    expect(a.state().prefix_index).toEqual(b.state().prefix_index);
    expect(a.state().prefix_index.blocks).toBeGreaterThan(0);
  });

  it('an engine restart (its sequence back at 0) makes the router forget that engine, then learn it again', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50, push: pushing });
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'events' });
    routers.push(r);
    const url = fleet.urls[0]!;
    for (let k = 0; k < 3; k++)
      await post(`${r.url}/v1/chat/completions`, { messages: [{ role: 'user', content: `old ${k} `.repeat(60) }], max_tokens: 2 });
    await settled(r);
    const before = r.state().prefix_index.blocks;
    expect(before).toBeGreaterThan(0);
    expect((await put(`${url}/sim/push`, { restart: true })).status).toBe(200);
    // The first batch after the restart carries sequence 0: the router drops what the engine held, then applies it.
    await post(`${r.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'new '.repeat(60) }], max_tokens: 2 });
    await eventually(async () => r.state().workers[0]!.kv_events!.resets_total === 1);
    await settled(r);
    const after = r.state().prefix_index.blocks;
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(before);
    expect(r.state().workers[0]!.kv_events!.decode_errors_total).toBe(0);
  });
});

describe('--tokenizer', () => {
  it('a tokenizer that cannot be read stops the start with one line', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50, push: pushing });
    const { Router } = await import('../../src/router/index.js');
    const { defaultConfig } = await import('../../src/config/index.js');
    const { silentLogger } = await import('../../src/router/index.js');
    const r = new Router({
      config: {
        ...defaultConfig(),
        workerUrls: fleet.urls,
        port: 0,
        policy: 'cache_aware',
        prefixSource: 'events',
        tokenizer: '/nonexistent/tokenizer.json',
        tui: false,
      },
      log: silentLogger,
      version: 'test',
    });
    await expect(r.start()).rejects.toMatchObject({
      code: 'RCTL_E_TOKENIZER',
      message: expect.stringMatching(/^cannot read tokenizer\.json at \/nonexistent\/tokenizer\.json: ENOENT$/) as unknown as string,
    });
    await r.close();
  });
});
