/**
 * What decoding the engines' push frames costs the router's one thread, per frame:
 * the request path waits for it whenever a frame arrives between two requests.
 *
 *   npm run perf -- push
 *
 * Payloads are written by the simulator's writer in the engines' own byte forms.
 * "typical" is a scheduler step's batch (a few BlockStored of one to a few blocks,
 * with their token ids); "long prompt" stores a 100K-token prompt's 6,250 blocks in one
 * event; "cap" is the largest event the decoder accepts (65,536 hashes).
 */
import { decodeKvEventBatch, decodeLoadStat } from '../src/engines/index.js';
import { encodeMsgpack, MsgpackMap } from '../src/msgpack/index.js';
import type { MsgpackValue } from '../src/msgpack/index.js';
import { KEY_CHAIN_ROOT, keyChain } from '../src/prefix/index.js';
import { writeResult } from './support/results.js';

function time(fn: () => void, minMs = 400): number {
  for (let i = 0; i < 50; i++) fn();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs) {
    fn();
    n++;
  }
  return ((performance.now() - t0) / n) * 1000;
}

const hash = (i: number): bigint => BigInt.asIntN(64, (BigInt(i) * 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn);
const stored = (first: number, blocks: number, map: boolean): MsgpackValue => {
  const hashes = Array.from({ length: blocks }, (_, i) => hash(first + i));
  const tokens = Array.from({ length: blocks * 16 }, (_, i) => 1000 + ((first + i) % 50_000));
  return map
    ? new MsgpackMap([
        ['type', 'BlockStored'],
        ['block_hashes', hashes],
        ['parent_block_hash', first > 0 ? hash(first - 1) : null],
        ['token_ids', tokens],
        ['block_size', 16],
        ['lora_id', null],
        ['medium', 'GPU'],
      ])
    : ['BlockStored', hashes, first > 0 ? hash(first - 1) : null, tokens, 16, null, 'GPU'];
};

const cases: Array<[string, Uint8Array, slug: string]> = [
  [
    'typical step: 4 events, 1–3 blocks each (positional)',
    encodeMsgpack([1.5, [stored(0, 1, false), stored(10, 3, false), stored(20, 2, false), ['BlockRemoved', [hash(99)], 'GPU']], 0]),
    'step_positional',
  ],
  [
    'typical step, tagged maps',
    encodeMsgpack([
      1.5,
      [
        stored(0, 1, true),
        stored(10, 3, true),
        stored(20, 2, true),
        new MsgpackMap([
          ['type', 'BlockRemoved'],
          ['block_hashes', [hash(99)]],
          ['medium', 'GPU'],
        ]),
      ],
      0,
    ]),
    'step_tagged',
  ],
  ['long prompt: one event of 6,250 blocks and 100K token ids', encodeMsgpack([1.5, [stored(0, 6250, false)], 0]), 'event_100k_tokens'],
  [
    'cap: one BlockRemoved of 65,536 hashes',
    encodeMsgpack([1.5, [['BlockRemoved', Array.from({ length: 65_536 }, (_, i) => hash(i)), 'GPU']], 0]),
    'event_cap',
  ],
];

console.log(`node ${process.version}`);
console.log('| frame | payload | decode | decode, token ids kept (vLLM, keyed by tokens) |');
console.log('|---|---:|---:|---:|');
const figures: Record<string, number> = {};
for (const [name, bytes, slug] of cases) {
  const plain = time(() => decodeKvEventBatch(bytes, 'sglang')).toFixed(1);
  const kept = time(() => decodeKvEventBatch(bytes, 'vllm', { tokens: true })).toFixed(1);
  figures[`${slug}_decode_us`] = Number(plain);
  figures[`${slug}_decode_tokens_kept_us`] = Number(kept);
  console.log(`| ${name} | ${(bytes.length / 1024).toFixed(1)} KiB | ${plain} µs | ${kept} µs |`);
}
const load = encodeMsgpack(['LoadStat', 12, 7, 123_456, 500_000, 0, 4096]);
const loadUs = time(() => decodeLoadStat(load)).toFixed(2);
figures.loadstat_decode_us = Number(loadUs);
console.log(`| LoadStat | ${load.length} B | ${loadUs} µs | – |`);
// Keying a stored run by its tokens (docs/engine-push.md §Keying requests): the chain over the event's token ids.
const ids = new Uint32Array(100_000).map((_, i) => 1000 + (i % 50_000));
const keys = new Float64Array(6250);
console.log('');
const chainUs = time(() => keyChain(KEY_CHAIN_ROOT, ids, 0, 6250, 16, keys));
console.log(`keyChain over 100K token ids (6,250 blocks of 16): ${chainUs.toFixed(0)} µs`);
writeResult('push', {
  figures: { ...figures, key_chain_100k_tokens_us: Math.round(chainUs) },
  bottleneck: 'this one process on one core',
});
