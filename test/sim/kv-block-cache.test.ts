import { describe, expect, it } from 'vitest';
import { KvBlockCache } from '../../src/sim/kv-block-cache.js';
import { Rng } from '../../src/sim/rng.js';

/** The cache takes the sequence a run's hashes are of, for its listener; these tests have none listening for tokens. */
const NO_TOKENS: readonly number[] = [];

describe('KvBlockCache', () => {
  it('caches committed blocks and counts them free once released', () => {
    const c = new KvBlockCache(10);
    expect(c.admit([1, 2, 3], 0, 4)).toBe(true);
    expect(c.usedBlocks()).toBe(4);
    c.commit([1, 2, 3], 0, 3, NO_TOKENS);
    expect(c.usedBlocks()).toBe(4);
    c.release([1, 2, 3], 3, 1);
    expect(c.usedBlocks()).toBe(0);
    expect(c.cachedBlocks()).toBe(3);
    expect(c.matchPrefix([1, 2, 3, 4])).toBe(3);
    expect(c.matchPrefix([9, 2, 3])).toBe(0);
  });

  it('refuses an admission that does not fit, leaving state untouched', () => {
    const c = new KvBlockCache(4);
    expect(c.admit([], 0, 3)).toBe(true);
    expect(c.admit([], 0, 2)).toBe(false);
    expect(c.usedBlocks()).toBe(3);
  });

  it('evicts least recently released blocks first, never pinned ones', () => {
    const c = new KvBlockCache(4);
    c.admit([1, 2], 0, 2);
    c.commit([1, 2], 0, 2, NO_TOKENS);
    c.release([1, 2], 2, 0); // 1 then 2 released: 1 is older
    c.admit([3], 0, 1);
    c.commit([3], 0, 1, NO_TOKENS); // pinned
    expect(c.admit([], 0, 2)).toBe(true); // 1 free + evicts block 1
    expect(c.evictions).toBe(1);
    expect(c.matchPrefix([1])).toBe(0);
    expect(c.matchPrefix([2])).toBe(1);
    expect(c.matchPrefix([3])).toBe(1);
    expect(c.admit([], 0, 1)).toBe(true); // evicts 2; 3 stays pinned
    expect(c.matchPrefix([3])).toBe(1);
    expect(c.admit([], 0, 1)).toBe(false);
  });

  it('releases a request’s chain deepest first, so eviction takes its tail and its prefix still hits', () => {
    const c = new KvBlockCache(4);
    c.admit([1, 2, 3], 0, 3);
    c.commit([1, 2, 3], 0, 3, NO_TOKENS);
    c.releaseChain([1, 2, 3], 3, 0);
    expect(c.admit([], 0, 2)).toBe(true); // 1 free + evicts block 3, the leaf
    expect(c.matchPrefix([1, 2, 3])).toBe(2);
    expect(c.admit([], 0, 1)).toBe(true); // evicts block 2
    expect(c.matchPrefix([1, 2, 3])).toBe(1);
  });

  it('does not evict the blocks an admission is about to reuse', () => {
    const c = new KvBlockCache(3);
    c.admit([1, 2], 0, 2);
    c.commit([1, 2], 0, 2, NO_TOKENS);
    c.release([1, 2], 2, 0);
    // Reusing 1 and 2 leaves one free block: reserving two must fail, not evict 1 or 2.
    expect(c.admit([1, 2], 2, 2)).toBe(false);
    expect(c.admit([1, 2], 2, 1)).toBe(true);
    expect(c.usedBlocks()).toBe(3);
  });

  it('shares a block another request committed meanwhile', () => {
    const c = new KvBlockCache(10);
    c.admit([5], 0, 1);
    c.admit([5], 0, 1);
    c.commit([5], 0, 1, NO_TOKENS);
    c.commit([5], 0, 1, NO_TOKENS);
    expect(c.cachedBlocks()).toBe(1);
    expect(c.usedBlocks()).toBe(1);
    c.release([5], 1, 0);
    expect(c.usedBlocks()).toBe(1);
    c.release([5], 1, 0);
    expect(c.usedBlocks()).toBe(0);
  });

  it('behaves as a plain map of references with an LRU set of released blocks, over random request lives', () => {
    // The model: the cache as first written, a Map of references and a Set in release order.
    const cap = 64;
    const refs = new Map<number, number>();
    const lru = new Set<number>();
    let anonymous = 0;
    const evicted: number[] = [];
    const c = new KvBlockCache(cap);
    const removed: number[] = [];
    c.listener = { stored() {}, removed: (hs) => removed.push(...hs), cleared() {} };
    const rng = new Rng(5);
    const live: { hashes: number[]; pinned: number; reserve: number }[] = [];
    for (let step = 0; step < 5000; step++) {
      if (live.length > 0 && (rng.next() < 0.45 || live.length > 6)) {
        const r = live.splice(rng.int(live.length), 1)[0]!;
        c.commit(r.hashes, r.pinned, r.hashes.length, NO_TOKENS);
        for (const h of r.hashes.slice(r.pinned)) {
          anonymous--;
          if (refs.has(h)) {
            if (refs.get(h) === 0) lru.delete(h);
            refs.set(h, refs.get(h)! + 1);
          } else refs.set(h, 1);
        }
        c.release(r.hashes, r.hashes.length, r.reserve - (r.hashes.length - r.pinned));
        for (const h of r.hashes) {
          const n = refs.get(h)! - 1;
          refs.set(h, n);
          if (n === 0) lru.add(h);
        }
        anonymous -= r.reserve - (r.hashes.length - r.pinned);
      } else {
        // Prompts share leading hashes: family f, blocks 0..len.
        const f = rng.int(5);
        const hashes = Array.from({ length: 1 + rng.int(12) }, (_, i) => f * 1e9 + i + 0.5 * 2 ** 40);
        let hits = 0;
        while (hits < hashes.length && refs.has(hashes[hits]!)) hits++;
        expect(c.matchPrefix(hashes)).toBe(hits);
        const reserve = hashes.length - hits + rng.int(3);
        const reuse = hashes.slice(0, hits).filter((h) => refs.get(h) === 0).length;
        const fits = cap - refs.size - anonymous + lru.size - reuse >= reserve;
        expect(c.admit(hashes, hits, reserve)).toBe(fits);
        if (!fits) continue;
        for (const h of hashes.slice(0, hits)) {
          if (refs.get(h) === 0) lru.delete(h);
          refs.set(h, refs.get(h)! + 1);
        }
        let free = cap - refs.size - anonymous;
        for (const h of [...lru]) {
          if (free >= reserve) break;
          lru.delete(h);
          refs.delete(h);
          evicted.push(h);
          free++;
        }
        anonymous += reserve;
        live.push({ hashes, pinned: hits, reserve });
      }
      expect(c.cachedBlocks()).toBe(refs.size);
      expect(c.usedBlocks()).toBe([...refs.values()].filter((n) => n > 0).length + anonymous);
    }
    expect(removed).toEqual(evicted);
    expect(evicted.length).toBeGreaterThan(100);
  });
});
