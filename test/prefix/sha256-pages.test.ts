import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  digestBytes,
  digestWords,
  engineBlockKeys,
  foldHash,
  pageChainWords,
  sglangPageChain,
  sglangPageHashes,
} from '../../src/prefix/index.js';
import type { PageHasher } from '../../src/prefix/index.js';

/** SGLang's page chain straight from its definition, one node:crypto hash object a page: the reference. */
function reference(tokens: ArrayLike<number>, pageSize: number, parent?: Buffer, from = 0, to = tokens.length): Buffer[] {
  const out: Buffer[] = [];
  for (let start = from; start < to; start += pageSize) {
    const h = createHash('sha256');
    if (parent) h.update(parent);
    const end = Math.min(start + pageSize, to);
    const bytes = Buffer.alloc((end - start) * 4);
    for (let i = start; i < end; i++) bytes.writeUInt32LE(tokens[i]! >>> 0, (i - start) * 4);
    parent = h.update(bytes).digest();
    out.push(parent);
  }
  return out;
}
const published = (d: Buffer): bigint => d.readBigInt64BE(0);
const key = (d: Buffer): number => foldHash(d.readUInt32BE(0), d.readUInt32BE(4));

let seed = 77_001;
const rnd = (n: number): number => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 8) % n;
};
/** Token ids of every size, the edges of u32 included. */
const token = (): number => {
  const r = rnd(20);
  if (r === 0) return 0xffffffff;
  if (r === 1) return 0;
  if (r === 2) return 0x80000000 + rnd(1 << 20);
  return rnd(152_000);
};
const tokens = (n: number): number[] => Array.from({ length: n }, token);
const HASHERS: PageHasher[] = ['js', 'native'];

describe('pageChainWords: SHA-256 on digest words', () => {
  it.each(HASHERS)(
    '%s: every page size from 1 to 80, with and without a parent, partial last pages included, equals node:crypto',
    (hasher) => {
      // 32 + 4n bytes crosses a compression block's padding edge at n = 6 (56 bytes) and n = 14 without a parent.
      for (let pageSize = 1; pageSize <= 80; pageSize++) {
        const t = tokens(pageSize * 3 + rnd(pageSize));
        const want = reference(t, pageSize);
        const seen: Buffer[] = [];
        const keys: number[] = [];
        const state = new Int32Array(8);
        const n = pageChainWords(t, 0, t.length, pageSize, state, false, keys, (d) => seen.push(digestBytes(d)), hasher);
        expect(n).toBe(want.length);
        expect(seen).toEqual(want);
        expect(keys).toEqual(want.map(key));
        expect(digestBytes(state)).toEqual(want[want.length - 1]);
      }
    },
  );

  it.each(HASHERS)('%s: the first page with no parent is SHA-256 of its tokens alone', (hasher) => {
    for (const pageSize of [1, 4, 13, 14, 16, 64]) {
      const t = tokens(pageSize);
      const bytes = Buffer.alloc(pageSize * 4);
      t.forEach((v, i) => bytes.writeUInt32LE(v, i * 4));
      const state = new Int32Array(8).fill(-1); // ignored without a parent
      pageChainWords(t, 0, pageSize, pageSize, state, false, undefined, undefined, hasher);
      expect(digestBytes(state)).toEqual(createHash('sha256').update(bytes).digest());
    }
  });

  it.each(HASHERS)("%s: resumes from a parent's words mid-chain", (hasher) => {
    for (const pageSize of [1, 2, 5, 6, 16, 63, 64]) {
      const t = tokens(pageSize * 40);
      const want = reference(t, pageSize);
      const state = digestWords(want[16]!);
      const keys: number[] = [];
      pageChainWords(t, 17 * pageSize, t.length, pageSize, state, true, keys, undefined, hasher);
      expect(keys).toEqual(want.slice(17).map(key));
    }
  });

  it('random lengths and page sizes, through both hashers and from Int32Array (negative words are u32 tokens)', () => {
    for (let k = 0; k < 60; k++) {
      const pageSize = rnd(5) === 0 ? 1 : 1 + rnd(100);
      const t = Int32Array.from(tokens(rnd(3_000)));
      const want = reference(t, pageSize).map(key);
      for (const hasher of HASHERS) {
        const keys: number[] = [];
        pageChainWords(t, 0, t.length, pageSize, new Int32Array(8), false, keys, undefined, hasher);
        expect(keys).toEqual(want);
      }
    }
  });
});

describe('sglangPageHashes and sglangPageChain', () => {
  it('sglangPageHashes is the published i64 of each page, the partial last page included', () => {
    for (let k = 0; k < 40; k++) {
      const pageSize = 1 + rnd(70);
      const t = tokens(rnd(2_000));
      expect(sglangPageHashes(t, pageSize)).toEqual(reference(t, pageSize).map(published));
    }
  });

  it('sglangPageChain hands each page a digest Buffer of its own, resumes from a Buffer parent, and returns the last', () => {
    const t = tokens(300);
    const want = reference(t, 4);
    const got: Buffer[] = [];
    const last = sglangPageChain(t, 0, 120, 4, undefined, (d) => got.push(d));
    expect(got).toEqual(want.slice(0, 30));
    expect(new Set(got).size).toBe(30);
    expect(last).toEqual(want[29]);
    const rest: Buffer[] = [];
    expect(sglangPageChain(t, 120, 300, 4, last, (d) => rest.push(d))).toEqual(want[74]);
    expect(rest).toEqual(want.slice(30));
    // Nothing to hash: the parent comes back.
    expect(sglangPageChain(t, 300, 300, 4, last, () => undefined)).toBe(last);
    // A parent held in a Buffer slice of a larger allocation.
    const pooled = Buffer.concat([Buffer.alloc(3), want[29]!]).subarray(3);
    const again: Buffer[] = [];
    sglangPageChain(t, 120, 124, 4, pooled, (d) => again.push(d));
    expect(again).toEqual([want[30]]);
  });
});

describe('engineBlockKeys (sglang): checkpoints against the reference chain', () => {
  it('prompts sharing beginnings of random lengths, past several checkpoints, with other tails', () => {
    const pool = tokens(12_000);
    for (const pageSize of [1, 1, 3, 16, 64, 50]) {
      for (let k = 0; k < 8; k++) {
        // A shared beginning (often past two or more ~1,024-token checkpoints), then a tail of its own.
        const shared = pool.slice(0, rnd(pageSize === 1 ? 5_000 : 11_000));
        const t = Int32Array.from([...shared, ...tokens(rnd(2_500))]);
        const full = Math.floor(t.length / pageSize) * pageSize;
        expect(engineBlockKeys(t, pageSize, 'sglang')).toEqual(reference(t, pageSize, undefined, 0, full).map(key));
      }
    }
  });

  it('pages of 1: a prompt resumes from the furthest checkpoint and is still exact when its tail differs right after it', () => {
    const base = tokens(4_300); // checkpoints at 1,024, 2,048, 3,072 and 4,096 tokens
    expect(engineBlockKeys(base, 1, 'sglang')).toEqual(reference(base, 1).map(key));
    for (const cut of [1_023, 1_024, 1_025, 3_072, 3_073, 4_096]) {
      const t = [...base.slice(0, cut), ...tokens(700)];
      expect(engineBlockKeys(t, 1, 'sglang')).toEqual(reference(t, 1).map(key));
    }
    // The first prompt again, unchanged by the checkpoints others left.
    expect(engineBlockKeys(base, 1, 'sglang')).toEqual(reference(base, 1).map(key));
  });
});
