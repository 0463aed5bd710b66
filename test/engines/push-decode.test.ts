import { describe, expect, it } from 'vitest';
import {
  decodeKvEventBatch,
  decodeLoadStat,
  hashToBigInt,
  PushDecodeError,
  readPushFrame,
  sequenceFrame,
  SequenceTracker,
} from '../../src/engines/index.js';
import type { KvEvent } from '../../src/engines/index.js';
import { encodeMsgpack, MsgpackMap } from '../../src/msgpack/index.js';
import type { MsgpackValue } from '../../src/msgpack/index.js';

const m = (o: Record<string, MsgpackValue>): MsgpackMap => new MsgpackMap(Object.entries(o));
const hashesOf = (e: KvEvent): bigint[] =>
  e.kind === 'cleared' ? [] : Array.from({ length: e.hashes.count }, (_, i) => hashToBigInt(e.hashes.words, i));
const u64 = (v: bigint): bigint => BigInt.asUintN(64, v);
const tokens = (n: number): number[] => Array.from({ length: n }, (_, i) => 151_644 + i);

// Values as the engines send them: SGLang hashes are signed i64, vLLM's unsigned u64 (above 2^63 too).
const S1 = -6_917_529_027_641_081_856n;
const S2 = 4_611_686_018_427_387_904n;
const V1 = 15_760_518_052_499_183_552n;

describe('KV event batches: every form SGLang and vLLM publish (docs/engine-push.md §KV events)', () => {
  it.each<[string, 'sglang' | 'vllm', MsgpackValue, Partial<Extract<KvEvent, { kind: 'stored' }>>, bigint[]]>([
    [
      'SGLang positional, medium last',
      'sglang',
      [1.5, [['BlockStored', [S1, S2], null, tokens(32), 16, null, 'GPU']], 0],
      { medium: 'GPU', blockSize: 16, tokenCount: 32, cacheSalt: null },
      [u64(S1), S2],
    ],
    [
      'SGLang positional before medium existed',
      'sglang',
      [1.5, [['BlockStored', [S1], S2, tokens(16), 16, null]], 0],
      { medium: null, blockSize: 16 },
      [u64(S1)],
    ],
    [
      'SGLang positional with the metadata map at 7 (a salted store)',
      'sglang',
      [1.5, [['BlockStored', [S2], null, tokens(16), 16, null, 'GPU', m({ cache_salt: 'tenant-a' })]], 1],
      { cacheSalt: 'tenant-a' },
      [S2],
    ],
    [
      'SGLang tagged map (with session_id)',
      'sglang',
      [
        1.5,
        [
          m({
            type: 'BlockStored',
            block_hashes: [S1],
            parent_block_hash: null,
            token_ids: tokens(1),
            block_size: 1,
            lora_id: null,
            medium: 'GPU',
            session_id: 's-9',
          }),
        ],
        0,
      ],
      { blockSize: 1, medium: 'GPU' },
      [u64(S1)],
    ],
    [
      'vLLM positional, the 2025 five fields, no rank',
      'vllm',
      [1.5, [['BlockStored', [V1], null, tokens(16), 16]]],
      { medium: null, loraName: null },
      [V1],
    ],
    [
      'vLLM positional, every field up to the sliding window',
      'vllm',
      [1.5, [['BlockStored', [V1, 7n], null, tokens(32), 16, null, 'GPU', null, [null, null], 0, 'full_attention', null]], 0],
      { medium: 'GPU' },
      [V1, 7n],
    ],
    [
      'vLLM positional with a LoRA name at 7',
      'vllm',
      [1.5, [['BlockStored', [V1], null, tokens(16), 16, 3, 'GPU', 'sql-adapter']], 0],
      { loraName: 'sql-adapter' },
      [V1],
    ],
    [
      'vLLM map form (the capture from vLLM 0.26)',
      'vllm',
      [
        1_789_095_808.8378847,
        [
          m({
            type: 'BlockStored',
            block_hashes: [V1],
            parent_block_hash: null,
            token_ids: tokens(16),
            block_size: 16,
            lora_id: null,
            medium: 'GPU',
            lora_name: null,
            extra_keys: [null],
            group_idx: 0,
            kv_cache_spec_kind: 'full_attention',
          }),
        ],
        0,
      ],
      { medium: 'GPU', blockSize: 16, tokenCount: 16 },
      [V1],
    ],
    [
      'vLLM bytes mode: 32-byte digests fold to their last 8 bytes',
      'vllm',
      [
        1.5,
        [
          [
            'BlockStored',
            [new Uint8Array([...new Array(24).fill(0xee), 0xda, 0xb8, 0x9b, 0xaa, 0x7b, 0x58, 0x57, 0xc0])],
            null,
            tokens(16),
            16,
            null,
            'GPU',
            null,
          ],
        ],
        0,
      ],
      {},
      [V1],
    ],
    [
      'an outer batch written as a map',
      'vllm',
      m({ ts: 1.5, events: [['BlockStored', [V1], null, tokens(16), 16, null, 'GPU', null]], data_parallel_rank: 2 }),
      { medium: 'GPU' },
      [V1],
    ],
  ])('%s', (_name, engine, batch, expected, hashes) => {
    const decoded = decodeKvEventBatch(encodeMsgpack(batch), engine);
    expect(decoded.skipped).toEqual([]);
    expect(decoded.events).toHaveLength(1);
    const e = decoded.events[0]!;
    expect(e.kind).toBe('stored');
    expect(e).toMatchObject(expected);
    expect(hashesOf(e)).toEqual(hashes);
  });

  it('BlockRemoved and AllBlocksCleared, positional and tagged, and the rank the payload names', () => {
    const batch = [
      2.0,
      [
        ['BlockRemoved', [S1, S2], 'GPU'],
        ['BlockRemoved', [V1]],
        m({ type: 'BlockRemoved', block_hashes: [S2], medium: 'CPU_PINNED', group_idx: 0 }),
        ['AllBlocksCleared'],
        m({ type: 'AllBlocksCleared' }),
      ],
      3,
    ];
    const d = decodeKvEventBatch(encodeMsgpack(batch), 'sglang');
    expect(d.rank).toBe(3);
    expect(d.ts).toBe(2);
    expect(d.events.map((e) => e.kind)).toEqual(['removed', 'removed', 'removed', 'cleared', 'cleared']);
    expect(d.events.map((e) => (e.kind === 'removed' ? e.medium : null))).toEqual(['GPU', null, 'CPU_PINNED', null, null]);
    expect(hashesOf(d.events[0]!)).toEqual([u64(S1), S2]);
  });

  it('an event it cannot read is skipped with its reason, and the rest of the batch applies', () => {
    const batch = [
      1.0,
      [
        ['BlockStored', [1n], null, tokens(16), 16, null, 'GPU'],
        ['BlockEvicted', [2n]],
        m({ type: 'SomethingNew', x: 1 }),
        ['BlockStored', 'not-a-list', null, [], 16],
        ['BlockRemoved', [3n], 7],
        [],
        m({ block_hashes: [4n] }),
        ['BlockStored', [5n], null, tokens(16), 16, null, 'GPU'],
      ],
      0,
    ];
    const d = decodeKvEventBatch(encodeMsgpack(batch), 'sglang');
    expect(d.events.map(hashesOf)).toEqual([[1n], [5n]]);
    expect(d.skipped.map((s) => s.index)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(d.skipped[0]!.reason).toMatch(/unknown event tag "BlockEvicted"/);
  });

  it('position 7 is read by engine type: a map is SGLang metadata, a string a vLLM LoRA name; the other way round is skipped', () => {
    const sglang = encodeMsgpack([1, [['BlockStored', [1n], null, [], 16, null, 'GPU', m({ cache_salt: 's' })]], 0]);
    const vllm = encodeMsgpack([1, [['BlockStored', [1n], null, [], 16, null, 'GPU', 'lora-x']], 0]);
    expect(decodeKvEventBatch(sglang, 'sglang').events[0]).toMatchObject({ cacheSalt: 's', loraName: null });
    expect(decodeKvEventBatch(vllm, 'vllm').events[0]).toMatchObject({ cacheSalt: null, loraName: 'lora-x' });
    expect(decodeKvEventBatch(sglang, 'vllm').skipped).toHaveLength(1);
    expect(decodeKvEventBatch(vllm, 'sglang').skipped).toHaveLength(1);
  });

  it('keeps the token ids when asked (keying by tokens), in both forms; extra_keys that name something are flagged', () => {
    const ids = [0, 1, 127, 128, 65_535, 65_536, 0xffff_ffff];
    const positional = encodeMsgpack([1, [['BlockStored', [V1], null, ids, 7, null, 'GPU', null, [['mm-hash']], 0]], 0]);
    const tagged = encodeMsgpack([
      1,
      [m({ type: 'BlockStored', block_hashes: [V1], parent_block_hash: 5n, token_ids: ids, block_size: 7, extra_keys: [null] })],
      0,
    ]);
    const p = decodeKvEventBatch(positional, 'vllm', { tokens: true }).events[0]!;
    const t = decodeKvEventBatch(tagged, 'vllm', { tokens: true }).events[0]!;
    expect(p).toMatchObject({ kind: 'stored', tokenCount: 7, extraKeys: true });
    expect(t).toMatchObject({ kind: 'stored', tokenCount: 7, extraKeys: false });
    for (const e of [p, t]) expect(e.kind === 'stored' && [...e.tokens!]).toEqual(ids);
    // Not asked: counted, not kept.
    expect(decodeKvEventBatch(tagged, 'vllm').events[0]).toMatchObject({ tokenCount: 7, tokens: null });
    // A token that is not an integer (SGLang's EAGLE bigrams) skips the event only when the ids are kept.
    const pairs = encodeMsgpack([1, [['BlockStored', [V1], null, [[1, 2]], 1, null, 'GPU']], 0]);
    expect(decodeKvEventBatch(pairs, 'sglang').skipped).toEqual([]);
    expect(decodeKvEventBatch(pairs, 'sglang', { tokens: true }).skipped[0]!.reason).toMatch(/token id 0 is a array/);
  });

  it('more hashes in one event than the cap is that event skipped, not the batch', () => {
    const many = new Array<bigint>(65_537).fill(9n);
    const d = decodeKvEventBatch(
      encodeMsgpack([
        1,
        [
          ['BlockRemoved', many],
          ['BlockRemoved', [1n]],
        ],
        0,
      ]),
      'vllm',
    );
    expect(d.skipped).toEqual([{ index: 0, reason: expect.stringMatching(/65537 hashes/) as unknown as string }]);
    expect(d.events).toHaveLength(1);
  });

  it.each([
    ['not msgpack at all', Buffer.from('{"json": true}')],
    ['a truncated batch', encodeMsgpack([1, [['BlockStored', [1n, 2n], null, tokens(16), 16]], 0]).subarray(0, 20)],
    ['a batch that is a string', encodeMsgpack('hello')],
    ['a batch of one element', encodeMsgpack([1])],
    ['bytes after the batch', Buffer.concat([encodeMsgpack([1, [], 0]), Buffer.from([0x01])])],
    ['a timestamp that is a string', encodeMsgpack(['now', [], 0])],
  ])('an unreadable batch (%s) is a PushDecodeError', (_name, bytes) => {
    expect(() => decodeKvEventBatch(bytes, 'sglang')).toThrow(PushDecodeError);
  });
});

describe('LoadStat (docs/engine-push.md §LoadStat)', () => {
  it.each<[string, MsgpackValue, object, number | null]>([
    ['the five fields', ['LoadStat', 3, 7, 12_000, 500_000, 0], { running: 3, waiting: 7, usedTokens: 12_000, maxTotalTokens: 500_000 }, 0],
    [
      'with waiting-uncached tokens appended',
      ['LoadStat', 1, 2, 10, 100, 1, 4096],
      { running: 1, waiting: 2, waitingUncachedTokens: 4096 },
      1,
    ],
    [
      'uncached nil (no cache-aware schedule), and a field from a newer engine',
      ['LoadStat', 1, 0, 10, 100, 0, null, 'future'],
      { running: 1, waiting: 0 },
      0,
    ],
    ['capacity 0 means unknown', ['LoadStat', 0, 0, 0, 0, 0], { running: 0, waiting: 0, usedTokens: 0 }, 0],
    [
      'a tagged map',
      m({ type: 'LoadStat', num_running_reqs: 4, num_waiting_reqs: 9, num_tokens: 1, max_total_num_tokens: 2, attn_dp_rank: 2 }),
      { running: 4, waiting: 9 },
      2,
    ],
  ])('%s', (_name, value, reading, rank) => {
    const d = decodeLoadStat(encodeMsgpack(value));
    expect(d.reading).toMatchObject(reading);
    expect(d.rank).toBe(rank);
  });

  it('capacity 0 leaves maxTotalTokens unset, nil uncached leaves waitingUncachedTokens unset', () => {
    expect(decodeLoadStat(encodeMsgpack(['LoadStat', 0, 0, 0, 0, 0])).reading.maxTotalTokens).toBeUndefined();
    expect(decodeLoadStat(encodeMsgpack(['LoadStat', 1, 0, 10, 100, 0, null])).reading.waitingUncachedTokens).toBeUndefined();
  });

  it.each([
    ['another tag', ['BlockStored', 1, 2, 3, 4, 0]],
    ['no queue length', ['LoadStat', 1]],
    ['a negative count', ['LoadStat', -1, 0, 0, 0, 0]],
    ['a float count', ['LoadStat', 1.5, 0, 0, 0, 0]],
    ['a string', 'LoadStat'],
  ])('%s is a PushDecodeError', (_name, value) => {
    expect(() => decodeLoadStat(encodeMsgpack(value as MsgpackValue))).toThrow(PushDecodeError);
  });
});

describe('the envelope and its sequence', () => {
  it('reads [topic, 8-byte big-endian sequence, payload]', () => {
    const payload = encodeMsgpack(['LoadStat', 0, 0, 0, 0, 0]);
    expect(readPushFrame([Buffer.from('load'), sequenceFrame(258), payload])).toEqual({ topic: 'load', seq: 258, payload });
    expect(sequenceFrame(258).toString('hex')).toBe('0000000000000102');
    expect(() => readPushFrame([Buffer.from('load'), payload])).toThrow(/2 frames/);
    expect(() => readPushFrame([Buffer.from('load'), Buffer.alloc(4), payload])).toThrow(/4-byte sequence/);
  });

  it('tracks order per publisher: next, gap (with the range to replay), duplicate, reset', () => {
    const t = new SequenceTracker();
    expect([5, 6].map((s) => t.observe(s).kind)).toEqual(['in_order', 'in_order']);
    expect(t.observe(9)).toEqual({ kind: 'gap', from: 7, to: 8 });
    expect(t.observe(8).kind).toBe('duplicate');
    expect(t.observe(0).kind).toBe('reset');
    expect(t.observe(1).kind).toBe('in_order');
    expect({ gaps: t.gaps, missed: t.missed, resets: t.resets }).toEqual({ gaps: 1, missed: 2, resets: 1 });
  });

  it('reads a step back to 1 as a restart of a publisher that numbers from 1 (llm-d-inference-sim), and 1 after 0 as the next', () => {
    const t = new SequenceTracker();
    expect([1, 2, 3].map((s) => t.observe(s).kind)).toEqual(['in_order', 'in_order', 'in_order']);
    expect(t.observe(1).kind).toBe('reset');
    expect(t.observe(2).kind).toBe('in_order');
    const z = new SequenceTracker();
    expect([0, 1, 2].map((s) => z.observe(s).kind)).toEqual(['in_order', 'in_order', 'in_order']);
    expect(z.observe(1).kind).toBe('reset');
  });
});

describe('a seeded fuzz of malformed payloads', () => {
  it('never crashes: every input decodes or is a PushDecodeError', () => {
    let seed = 0x5eed;
    const rnd = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const seeds = [
      encodeMsgpack([
        1.5,
        [
          ['BlockStored', [S1, S2], null, tokens(32), 16, null, 'GPU', m({ cache_salt: 'x' })],
          ['BlockRemoved', [V1], 'GPU'],
          ['AllBlocksCleared'],
        ],
        0,
      ]),
      encodeMsgpack([
        1.5,
        [m({ type: 'BlockStored', block_hashes: [V1], parent_block_hash: 3n, token_ids: tokens(16), block_size: 16, medium: 'GPU' })],
        0,
      ]),
      encodeMsgpack(['LoadStat', 3, 7, 12_000, 500_000, 0, 99]),
    ];
    let decoded = 0;
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const base = Buffer.from(seeds[i % seeds.length]!);
      const bytes = i % 7 === 0 ? Buffer.from(Array.from({ length: Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256))) : base;
      const flips = 1 + Math.floor(rnd() * 4);
      for (let f = 0; f < flips && bytes.length > 0; f++) bytes[Math.floor(rnd() * bytes.length)] = Math.floor(rnd() * 256);
      const cut = rnd() < 0.3 ? bytes.subarray(0, Math.floor(rnd() * bytes.length)) : bytes;
      for (const decode of [
        (b: Uint8Array) => decodeKvEventBatch(b, 'sglang'),
        (b: Uint8Array) => decodeKvEventBatch(b, 'vllm'),
        decodeLoadStat,
      ]) {
        try {
          decode(cut);
          decoded++;
        } catch (err) {
          if (!(err instanceof PushDecodeError)) throw new Error(`input ${cut.toString('hex')} threw ${String(err)}`, { cause: err });
          refused++;
        }
      }
    }
    expect(decoded).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
