import { afterEach, describe, expect, it } from 'vitest';
import {
  decodeLoadStat,
  hashToBigInt,
  KvEventFeed,
  parseServerInfo,
  PushSubscription,
  pushEndpoint,
  replayFrom,
} from '../../src/engines/index.js';
import type { KvEvent, KvEventBatch, LoadStat, PushInfo } from '../../src/engines/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { eventually, getJson, post, put } from '../helpers/http.js';

/**
 * The simulator's push channels, read with routerctl's own subscriber and decoders
 * over real ZMQ sockets on 127.0.0.1 (docs/engine-push.md, docs/simulator.md §Push channels).
 */
let fleet: SimFleet | undefined;
const closers: Array<{ close(): void }> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) c.close();
  await fleet?.close();
  fleet = undefined;
});

async function pushInfo(url: string): Promise<PushInfo> {
  const info = parseServerInfo(await getJson(`${url}/server_info`));
  expect(info?.push).not.toBeNull();
  return info!.push!;
}

/** A /generate request with its own token ids, so the blocks it stores are known. */
const generate = (url: string, ids: number[], maxTokens = 2) =>
  post(`${url}/generate`, { input_ids: ids, sampling_params: { max_new_tokens: maxTokens, ignore_eos: true } });
const ids = (seed: number, n: number): number[] => Array.from({ length: n }, (_, i) => 1000 + seed * 7919 + i);

describe('the simulator publishes as SGLang does, and routerctl reads it', () => {
  it('/server_info advertises the channels; LoadStat arrives per rank and again as a heartbeat while idle', async () => {
    fleet = await startSimFleet({
      workers: 1,
      dpSize: 2,
      speedup: 50,
      push: { kvEvents: true, kvFormat: 'array', loadPublish: true, topic: 'kv' },
    });
    const url = fleet.urls[0]!;
    const info = await pushInfo(url);
    expect(info).toMatchObject({ host: null, kvTopic: 'kv', blockSize: 16, dpSize: 2, loadTopic: 'load' });
    expect(info.loadPortBase).toBe(info.kvPortBase + 4);
    const seen: Array<{ rank: number; stat: LoadStat; seq: number; at: number }> = [];
    for (const rank of [0, 1]) {
      closers.push(
        new PushSubscription(pushEndpoint(url, info, info.loadPortBase!, rank), info.loadTopic, (f) =>
          seen.push({ rank, stat: decodeLoadStat(f.payload), seq: f.seq, at: Date.now() }),
        ),
      );
    }
    // Idle: the unchanged reading comes back about once a second from each rank.
    await eventually(async () => seen.filter((s) => s.rank === 1).length >= 2, 4000);
    const r1 = seen.filter((s) => s.rank === 1);
    expect(r1[1]!.at - r1[0]!.at).toBeGreaterThan(700);
    expect(r1[1]!.seq).toBe(r1[0]!.seq + 1);
    expect(r1[0]!.stat).toMatchObject({ rank: 1, reading: { running: 0, waiting: 0 } });
    expect(r1[0]!.stat.reading.maxTotalTokens).toBeGreaterThan(0);
    // A queue change is pushed at once, not at the next heartbeat.
    await put(`${url}/sim/load`, { num_waiting_reqs: 8 });
    const changed = Date.now();
    const hit = await eventually(async () => seen.find((s) => s.at >= changed && s.stat.reading.waiting === 4), 2000);
    expect(hit.at - changed).toBeLessThan(500);
  });

  it.each(['array', 'map'] as const)(
    'KV events (%s form): a request stores its prompt blocks, chained, with its token ids',
    async (kvFormat) => {
      fleet = await startSimFleet({ workers: 1, speedup: 50, push: { kvEvents: true, kvFormat, loadPublish: false, topic: '' } });
      const url = fleet.urls[0]!;
      const info = await pushInfo(url);
      const batches: KvEventBatch[] = [];
      const feed = new KvEventFeed(
        { endpoint: pushEndpoint(url, info, info.kvPortBase, 0), topic: info.kvTopic, engine: 'sglang' },
        { batch: (b) => batches.push(b), reset: () => undefined },
      );
      closers.push(feed);
      await new Promise((r) => setTimeout(r, 300)); // a SUB joins a moment after connect (ZMQ's slow joiner)
      expect((await generate(url, ids(1, 64))).status).toBe(200);
      const stored = await eventually(async () => {
        const all = batches.flatMap((b) => b.events).filter((e): e is Extract<KvEvent, { kind: 'stored' }> => e.kind === 'stored');
        return all.length > 0 ? all : undefined;
      });
      const hashes = stored.flatMap((e) => Array.from({ length: e.hashes.count }, (_, i) => hashToBigInt(e.hashes.words, i)));
      expect(hashes).toHaveLength(4); // 64 prompt tokens = 4 blocks of 16 (+2 generated: no fifth full block)
      expect(new Set(hashes).size).toBe(4);
      expect(stored[0]).toMatchObject({ blockSize: 16, medium: 'GPU', tokenCount: 64, parent: null });
      expect(feed.stats).toMatchObject({ decodeErrors: 0, skippedEvents: 0, gaps: 0 });
    },
  );

  it('a gap is repaired from the replay socket with nothing lost, in order', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50, push: { kvEvents: true, kvFormat: 'array', loadPublish: false, topic: '' } });
    const url = fleet.urls[0]!;
    const info = await pushInfo(url);
    const replay = fleet.servers[0]!.engine.push!.replayEndpoint(0);
    const seqs: number[] = [];
    const feed = new KvEventFeed(
      { endpoint: pushEndpoint(url, info, info.kvPortBase, 0), topic: '', engine: 'sglang', replayEndpoint: replay },
      { batch: (_b, seq) => seqs.push(seq), reset: () => undefined },
    );
    closers.push(feed);
    await new Promise((r) => setTimeout(r, 300));
    await generate(url, ids(1, 48));
    await eventually(async () => seqs.length >= 1);
    await put(`${url}/sim/push`, { kv_events: 'paused' });
    for (let k = 2; k <= 4; k++) await generate(url, ids(k, 48));
    await put(`${url}/sim/push`, { kv_events: 'live' });
    await generate(url, ids(9, 48));
    await eventually(async () => feed.stats.gaps === 1 && feed.stats.repaired > 0 && seqs.at(-1)! >= feed.stats.missed + 1);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i));
    expect(feed.stats).toMatchObject({ gaps: 1, lost: 0 });
    expect(feed.stats.repaired).toBe(feed.stats.missed);
    // The replay socket also answers a direct request for everything from 0.
    const all = await replayFrom(replay, 0, 2000);
    expect(all.complete).toBe(true);
    expect(all.batches.map((b) => b.seq)).toEqual(seqs.slice(0, all.batches.length));
  });
});
