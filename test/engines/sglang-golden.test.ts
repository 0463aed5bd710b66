import { describe, expect, it } from 'vitest';
import { engineBlockKeys, foldHash, pageChainWords, sglangPageHashes } from '../../src/prefix/index.js';

/**
 * SGLang's published golden vectors for its page hash (sgl-router's
 * `policies/kv_events/hash.rs`), through the router's own keying path: engineBlockKeys
 * with the checkpointed chain (docs/engine-push.md §Keying requests), which must name a
 * request's blocks exactly as an SGLang engine's KV events name them.
 */
const fold = (v: bigint): number => {
  const u = BigInt.asUintN(64, v);
  return foldHash(Number(u >> 32n), Number(u & 0xffffffffn));
};

describe('SGLang golden vectors through engineBlockKeys', () => {
  it('[1,2,3,4] in pages of 4', () => {
    expect(engineBlockKeys([1, 2, 3, 4], 4, 'sglang')).toEqual([fold(-3488128144981237669n)]);
  });

  it('[1,2,3,4,5] in pages of 4: the partial last page is not a full block, and is not keyed', () => {
    // SGLang's own hash covers the partial page too (the second golden value), but
    // an engine stores and announces only full pages, so the router keys only those.
    expect(sglangPageHashes([1, 2, 3, 4, 5], 4)).toEqual([-3488128144981237669n, -3787494577174227566n]);
    expect(engineBlockKeys([1, 2, 3, 4, 5], 4, 'sglang')).toEqual([fold(-3488128144981237669n)]);
  });

  it('[10,20,…,80] in pages of 2', () => {
    const want = [978178666101069530n, -895308556211281782n, -8033692805846017938n, 835415944263129316n];
    expect(engineBlockKeys([10, 20, 30, 40, 50, 60, 70, 80], 2, 'sglang')).toEqual(want.map(fold));
    expect(engineBlockKeys(Int32Array.from([10, 20, 30, 40, 50, 60, 70, 80]), 2, 'sglang')).toEqual(want.map(fold));
  });
});

describe('SGLang golden vectors through each page hasher', () => {
  // engineBlockKeys takes the TypeScript SHA-256 for small pages and node:crypto's one-shot
  // for large ones (src/prefix/sha256-pages.ts); both must give the published values.
  const published = (t: number[], page: number, hasher: 'js' | 'native'): bigint[] => {
    const out: bigint[] = [];
    pageChainWords(
      t,
      0,
      t.length,
      page,
      new Int32Array(8),
      false,
      undefined,
      (d) => out.push(BigInt.asIntN(64, (BigInt(d[0]! >>> 0) << 32n) | BigInt(d[1]! >>> 0))),
      hasher,
    );
    return out;
  };
  it.each(['js', 'native'] as const)('%s', (hasher) => {
    expect(published([1, 2, 3, 4], 4, hasher)).toEqual([-3488128144981237669n]);
    expect(published([1, 2, 3, 4, 5], 4, hasher)).toEqual([-3488128144981237669n, -3787494577174227566n]);
    expect(published([10, 20, 30, 40, 50, 60, 70, 80], 2, hasher)).toEqual([
      978178666101069530n,
      -895308556211281782n,
      -8033692805846017938n,
      835415944263129316n,
    ]);
  });
});

describe('checkpoint resume gives the fresh chain', () => {
  let seed = 20_261;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % 151_000;
  };
  const tokens = (n: number): number[] => Array.from({ length: n }, rnd);
  const fresh = (t: readonly number[], page: number): number[] =>
    sglangPageHashes(t.slice(0, Math.floor(t.length / page) * page), page).map(fold);

  it.each([16, 1, 64, 7])('pages of %i: a long prompt, then one sharing its beginning with another tail', (page) => {
    const shared = tokens(2_600); // past two checkpoints (~1,024 tokens each)
    const first = [...shared, ...tokens(900)];
    const second = [...shared, ...tokens(1_300)];
    expect(engineBlockKeys(first, page, 'sglang')).toEqual(fresh(first, page));
    // The second resumes from a checkpoint the first left, and hashes only the rest.
    expect(engineBlockKeys(second, page, 'sglang')).toEqual(fresh(second, page));
    // The first again, now that both left checkpoints: unchanged.
    expect(engineBlockKeys(first, page, 'sglang')).toEqual(fresh(first, page));
    // A prompt that stops inside the shared part, and one exactly at a checkpoint's edge.
    expect(engineBlockKeys(shared.slice(0, 1_500), page, 'sglang')).toEqual(fresh(shared.slice(0, 1_500), page));
    const span = page * Math.max(1, Math.round(1024 / page));
    expect(engineBlockKeys(shared.slice(0, span), page, 'sglang')).toEqual(fresh(shared.slice(0, span), page));
  });

  it("the same tokens in another page size do not resume from the first size's checkpoints", () => {
    const t = tokens(3_000);
    expect(engineBlockKeys(t, 16, 'sglang')).toEqual(fresh(t, 16));
    expect(engineBlockKeys(t, 32, 'sglang')).toEqual(fresh(t, 32));
  });
});
