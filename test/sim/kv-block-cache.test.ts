import { describe, expect, it } from 'vitest';
import { KvBlockCache } from '../../src/sim/kv-block-cache.js';

describe('KvBlockCache', () => {
  it('caches committed blocks and counts them free once released', () => {
    const c = new KvBlockCache(10);
    expect(c.admit([1, 2, 3], 0, 4)).toBe(true);
    expect(c.usedBlocks()).toBe(4);
    c.commit([1, 2, 3], 0, 3);
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
    c.commit([1, 2], 0, 2);
    c.release([1, 2], 2, 0); // 1 then 2 released: 1 is older
    c.admit([3], 0, 1);
    c.commit([3], 0, 1); // pinned
    expect(c.admit([], 0, 2)).toBe(true); // 1 free + evicts block 1
    expect(c.evictions).toBe(1);
    expect(c.matchPrefix([1])).toBe(0);
    expect(c.matchPrefix([2])).toBe(1);
    expect(c.matchPrefix([3])).toBe(1);
    expect(c.admit([], 0, 1)).toBe(true); // evicts 2; 3 stays pinned
    expect(c.matchPrefix([3])).toBe(1);
    expect(c.admit([], 0, 1)).toBe(false);
  });

  it('does not evict the blocks an admission is about to reuse', () => {
    const c = new KvBlockCache(3);
    c.admit([1, 2], 0, 2);
    c.commit([1, 2], 0, 2);
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
    c.commit([5], 0, 1);
    c.commit([5], 0, 1);
    expect(c.cachedBlocks()).toBe(1);
    expect(c.usedBlocks()).toBe(1);
    c.release([5], 1, 0);
    expect(c.usedBlocks()).toBe(1);
    c.release([5], 1, 0);
    expect(c.usedBlocks()).toBe(0);
  });
});
