import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { KvEventsRule } from '../../src/engines/index.js';
import type { Router } from '../../src/router/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { predictionAgreement, settled } from '../helpers/kv-events.js';
import { memoryLogger, startTestRouter } from '../helpers/router.js';

/**
 * vLLM's KV events, whose hashes no router can compute: endpoints named by
 * --kv-events (docs/configuration.md §KV event endpoints), blocks keyed by the tokens
 * the events carry (docs/engine-push.md §Keying requests). Simulated vLLM engines (their
 * hash chain rooted at random, as vLLM's is) publish over ZMQ on 127.0.0.x; the real
 * router; the official OpenAI client.
 */
const fleets: SimFleet[] = [];
const routers: Router[] = [];
afterEach(async () => {
  for (const r of routers.splice(0)) await r.close();
  for (const f of fleets.splice(0)) await f.close();
});

const BS = 16;
const vllmPush = { kvEvents: true, kvFormat: 'map' as const, loadPublish: false, topic: 'kv-events' };

async function vllmFleet(workers: number, opts: { host?: string; port?: number; format?: 'array' | 'map' } = {}): Promise<SimFleet> {
  const fleet = await startSimFleet({
    workers,
    speedup: 50,
    flavor: 'vllm',
    ...(opts.host ? { host: opts.host } : {}),
    push: { ...vllmPush, kvFormat: opts.format ?? 'map', ...(opts.port !== undefined ? { port: opts.port } : {}) },
  });
  fleets.push(fleet);
  return fleet;
}

/** The rules an operator writes for these engines: what `routerctl sim` prints. */
function rulesFor(fleet: SimFleet): KvEventsRule[] {
  return fleet.servers.map((s) => {
    const e = s.engine.push!.kvEventsEntry()!;
    return { workers: s.url, endpoint: e.endpoint, replayEndpoint: e['replay-endpoint'], topic: e.topic, dpSize: e['dp-size'] };
  });
}

/** Chats through the official client: how often the index predicted what the engine then reported cached. */
const agreement = (r: Router, total: number): Promise<{ agree: number; hits: number }> => predictionAgreement(r, total, BS, 'tokens');

describe('vLLM KV events named by --kv-events, keyed by their tokens', () => {
  it('predicts exactly the cached tokens the engine then reports', async () => {
    const fleet = await vllmFleet(3);
    const r = await startTestRouter(fleet.urls, {
      policy: 'cache_aware',
      prefixSource: 'events',
      workerQueueLimit: 6,
      kvEvents: rulesFor(fleet),
    });
    routers.push(r);
    expect(r.state().prefix_index.source).toBe('events');
    for (const w of r.state().workers) {
      expect(w.kv_events).toMatchObject({ endpoints_from: 'config', keying: 'tokens' });
    }
    const { agree, hits } = await agreement(r, 24);
    expect(hits).toBeGreaterThan(10);
    expect(agree / 24).toBeGreaterThanOrEqual(0.99);
    expect(r.state().workers.reduce((a, w) => a + w.kv_events!.unplaced_blocks_total + w.kv_events!.unkeyed_blocks_total, 0)).toBe(0);
  });

  it('reads the positional (array) form too', async () => {
    const fleet = await vllmFleet(2, { format: 'array' });
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'events', kvEvents: rulesFor(fleet) });
    routers.push(r);
    const { agree } = await agreement(r, 8);
    expect(agree).toBe(8);
  });

  it('one pattern covers every engine on its own host, same ports, as a vLLM fleet is deployed', async () => {
    // Two hosts in 127.0.0.0/8, the same KV port on each: one entry, the worker URL's host filled in.
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    const a = await vllmFleet(1, { host: '127.0.0.2', port });
    const b = await vllmFleet(1, { host: '127.0.0.3', port });
    const urls = [...a.urls, ...b.urls];
    const rule: KvEventsRule = {
      workers: 'http://127.0.0.*',
      endpoint: `tcp://*:${port}`,
      replayEndpoint: `tcp://*:${port + 1}`,
      topic: 'kv-events',
      dpSize: 1,
    };
    const r = await startTestRouter(urls, { policy: 'cache_aware', prefixSource: 'auto', kvEvents: [rule] });
    routers.push(r);
    expect(r.state().prefix_index.source).toBe('events');
    expect(r.state().workers.map((w) => w.kv_events!.endpoints[0])).toEqual([`tcp://127.0.0.2:${port}`, `tcp://127.0.0.3:${port}`]);
    const { agree } = await agreement(r, 8);
    expect(agree).toBe(8);
  });

  it('forgets what a flushed engine held, and learns it again', async () => {
    const fleet = await vllmFleet(1);
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'events', kvEvents: rulesFor(fleet) });
    routers.push(r);
    await agreement(r, 3);
    await settled(r);
    expect(r.state().prefix_index.blocks).toBeGreaterThan(0);
    // An engine restart: its cache empty, its sequence back at 0, no event said so.
    expect(fleet.servers[0]!.engine.push!.restart()).toBe(true);
    await agreement(r, 1);
    await settled(r);
    const { agree } = await agreement(r, 4);
    expect(agree).toBe(4);
  });

  it("without an entry the router finds a vLLM worker's events at its /kv_event_sources, as vLLM 0.32 advertises them", async () => {
    const fleet = await vllmFleet(2);
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'auto' });
    routers.push(r);
    expect(r.state().prefix_index.source).toBe('events');
    for (const w of r.state().workers)
      expect(w.kv_events).toMatchObject({ endpoints_from: 'engine', keying: 'tokens', replay_from: 'descriptor' });
  });

  it('a vLLM worker whose /kv_event_sources names none is not indexed, and the router says how to name its events', async () => {
    const fleet = await startSimFleet({ workers: 1, speedup: 50, flavor: 'vllm' });
    fleets.push(fleet);
    const log = memoryLogger();
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', prefixSource: 'auto' }, log);
    routers.push(r);
    expect(r.state().prefix_index.source).toBe('requests');
    const why = log.lines.find((l) => l.msg === 'prefix index built from requests, not KV events');
    expect(String(why?.fields?.reason)).toMatch(/--kv-events/);
  });

  it('a wrong port is a feed that stays silent, not a crash: requests still route', async () => {
    const fleet = await vllmFleet(1);
    const r = await startTestRouter(fleet.urls, {
      policy: 'cache_aware',
      prefixSource: 'events',
      kvEvents: [{ workers: fleet.urls[0]!, endpoint: 'tcp://127.0.0.1:1', replayEndpoint: null, topic: '', dpSize: 1 }],
    });
    routers.push(r);
    const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const res = await client.chat.completions.create({
      model: 'sim-llama-3.1-8b',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 2,
    });
    expect(res.choices[0]!.message.content).toBeTruthy();
    expect(r.state().workers[0]!.kv_events!.batches_total).toBe(0);
  });
});
