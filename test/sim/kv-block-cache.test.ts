import { describe, expect, it } from 'vitest';
import { KvBlockCache, NO_KV_NODE } from '../../src/sim/kv-block-cache.js';
import type { KvCacheListener, KvHolder } from '../../src/sim/kv-block-cache.js';
import { Rng } from '../../src/sim/rng.js';
import { PerBlockKvCache } from './support/per-block-kv-cache.js';

/** The cache takes the sequence a run's hashes are of, for its listener; these tests have none listening for tokens. */
const NO_TOKENS: readonly number[] = [];
const holder = (): KvHolder => ({ kvNode: NO_KV_NODE });

describe('KvBlockCache', () => {
  it('caches committed blocks and counts them free once released', () => {
    const c = new KvBlockCache(10);
    const r = holder();
    expect(c.admit(r, [1, 2, 3], 0, 4)).toBe(true);
    expect(c.usedBlocks()).toBe(4);
    c.commit(r, [1, 2, 3], 0, 3, NO_TOKENS);
    expect(c.usedBlocks()).toBe(4);
    c.releaseChain(r, 1);
    expect(c.usedBlocks()).toBe(0);
    expect(c.cachedBlocks()).toBe(3);
    expect(c.matchPrefix([1, 2, 3, 4])).toBe(3);
    expect(c.matchPrefix([1, 2, 7])).toBe(2);
    expect(c.matchPrefix([9, 2, 3])).toBe(0);
  });

  it('refuses an admission that does not fit, leaving state untouched', () => {
    const c = new KvBlockCache(4);
    expect(c.admit(holder(), [], 0, 3)).toBe(true);
    expect(c.admit(holder(), [], 0, 2)).toBe(false);
    expect(c.usedBlocks()).toBe(3);
  });

  it('evicts least recently released blocks first, never pinned ones', () => {
    const c = new KvBlockCache(4);
    const a = holder();
    c.admit(a, [1, 2], 0, 2);
    c.commit(a, [1, 2], 0, 2, NO_TOKENS);
    c.releaseChain(a, 0); // 2 then 1 released: 2 is older
    const b = holder();
    c.admit(b, [3], 0, 1);
    c.commit(b, [3], 0, 1, NO_TOKENS); // pinned
    expect(c.admit(holder(), [], 0, 2)).toBe(true); // 1 free + evicts block 2
    expect(c.evictions).toBe(1);
    expect(c.matchPrefix([1, 2])).toBe(1);
    expect(c.matchPrefix([3])).toBe(1);
    expect(c.admit(holder(), [], 0, 1)).toBe(true); // evicts 1; 3 stays pinned
    expect(c.matchPrefix([1])).toBe(0);
    expect(c.matchPrefix([3])).toBe(1);
    expect(c.admit(holder(), [], 0, 1)).toBe(false);
  });

  it('releases a request’s chain deepest first, so eviction takes its tail and its prefix still hits', () => {
    const c = new KvBlockCache(4);
    const r = holder();
    c.admit(r, [1, 2, 3], 0, 3);
    c.commit(r, [1, 2, 3], 0, 3, NO_TOKENS);
    c.releaseChain(r, 0);
    expect(c.admit(holder(), [], 0, 2)).toBe(true); // 1 free + evicts block 3, the leaf
    expect(c.matchPrefix([1, 2, 3])).toBe(2);
    expect(c.admit(holder(), [], 0, 1)).toBe(true); // evicts block 2
    expect(c.matchPrefix([1, 2, 3])).toBe(1);
  });

  it('does not evict the blocks an admission is about to reuse', () => {
    const c = new KvBlockCache(3);
    const r = holder();
    c.admit(r, [1, 2], 0, 2);
    c.commit(r, [1, 2], 0, 2, NO_TOKENS);
    c.releaseChain(r, 0);
    // Reusing 1 and 2 leaves one free block: reserving two must fail, not evict 1 or 2.
    expect(c.admit(holder(), [1, 2], 2, 2)).toBe(false);
    expect(c.admit(holder(), [1, 2], 2, 1)).toBe(true);
    expect(c.usedBlocks()).toBe(3);
  });

  it('pins part of a run and lets the rest of it go', () => {
    const c = new KvBlockCache(6);
    const r = holder();
    c.admit(r, [1, 2, 3, 4], 0, 4);
    c.commit(r, [1, 2, 3, 4], 0, 4, NO_TOKENS);
    c.releaseChain(r, 0);
    // A request sharing two of the run's four blocks pins those two; eviction then takes 4 and 3.
    const s = holder();
    expect(c.admit(s, [1, 2, 9], 2, 1)).toBe(true);
    expect(c.admit(holder(), [], 0, 3)).toBe(true);
    expect(c.matchPrefix([1, 2, 3, 4])).toBe(2);
    expect(c.pinnedBlocks()).toBe(2);
    c.releaseChain(s, 1);
    expect(c.usedBlocks()).toBe(3);
  });

  it('shares a block another request committed meanwhile', () => {
    const c = new KvBlockCache(10);
    const [a, b] = [holder(), holder()];
    c.admit(a, [5], 0, 1);
    c.admit(b, [5], 0, 1);
    c.commit(a, [5], 0, 1, NO_TOKENS);
    c.commit(b, [5], 0, 1, NO_TOKENS);
    expect(c.cachedBlocks()).toBe(1);
    expect(c.usedBlocks()).toBe(1);
    c.releaseChain(a, 0);
    expect(c.usedBlocks()).toBe(1);
    c.releaseChain(b, 0);
    expect(c.usedBlocks()).toBe(0);
  });

  for (const [capacity, seed] of [
    [24, 1],
    [64, 2],
    [64, 3],
    [200, 4],
    [1000, 5],
  ] as const) {
    it(`matches the per-block cache event for event over random request lives (capacity ${capacity}, seed ${seed})`, () => {
      // Prompts are chains over a branching tree of tokens: most blocks are shared, some
      // diverge, some requests extend another's answer, as conversations do.
      const intern = new Map<string, number>();
      const keyOf = (parent: number, token: number): number => {
        const k = `${parent}:${token}`;
        let v = intern.get(k);
        if (v === undefined) intern.set(k, (v = 2 ** 40 + intern.size * 7919));
        return v;
      };
      const chain = (tokens: readonly number[]): number[] => {
        const out: number[] = [];
        let parent = 0;
        for (const t of tokens) out.push((parent = keyOf(parent, t)));
        return out;
      };
      const events = (log: string[]): KvCacheListener => ({
        stored: (hs, parent, first) => log.push(`stored ${first} ${parent} ${hs.join(',')}`),
        removed: (hs) => log.push(`removed ${hs.join(',')}`),
        cleared: () => log.push('cleared'),
      });
      const runs = new KvBlockCache(capacity);
      const blocks = new PerBlockKvCache(capacity);
      const [runLog, blockLog]: [string[], string[]] = [[], []];
      runs.listener = events(runLog);
      blocks.listener = events(blockLog);
      const rng = new Rng(seed);
      interface Life {
        h: KvHolder;
        tokens: number[];
        prompt: number[];
        all: number[];
        hits: number;
        reserve: number;
        stage: 'admitted' | 'prefilled';
      }
      const live: Life[] = [];
      const maxLen = Math.max(4, Math.floor(capacity / 4));
      let admitted = 0;
      for (let step = 0; step < 4000; step++) {
        const roll = rng.next();
        if (live.length > 0 && (roll < 0.5 || live.length > 8)) {
          const r = live[rng.int(live.length)]!;
          if (r.stage === 'admitted' && rng.next() < 0.85) {
            runs.commit(r.h, r.prompt, r.hits, r.prompt.length, NO_TOKENS);
            blocks.commit(r.prompt, r.hits, r.prompt.length, NO_TOKENS);
            r.stage = 'prefilled';
          } else {
            live.splice(live.indexOf(r), 1);
            let pinned = r.stage === 'admitted' ? r.hits : r.prompt.length;
            let anonymous = r.reserve - (pinned - r.hits);
            if (r.stage === 'prefilled' && rng.next() < 0.8) {
              // It finishes: its answer's blocks are cached too.
              runs.commit(r.h, r.all, pinned, r.all.length, NO_TOKENS);
              blocks.commit(r.all, pinned, r.all.length, NO_TOKENS);
              anonymous -= r.all.length - pinned;
              pinned = r.all.length;
            }
            runs.releaseChain(r.h, anonymous);
            blocks.releaseChain(r.all, pinned, anonymous);
          }
        } else if (roll < 0.52) {
          runs.flush();
          blocks.flush();
        } else {
          // A new turn: another life's whole sequence (prompt and answer) plus more, or a fresh one.
          const base = live.length > 0 && rng.next() < 0.4 ? live[rng.int(live.length)]!.tokens : [];
          const tokens = base.slice(0, rng.int(base.length + 1));
          const promptLen = Math.min(maxLen, tokens.length + 1 + rng.int(maxLen));
          while (tokens.length < promptLen) tokens.push(rng.next() < 0.2 ? rng.int(3) : 0);
          const total = tokens.concat(Array.from({ length: rng.int(5) }, () => rng.int(2)));
          const all = chain(total);
          const prompt = all.slice(0, promptLen);
          const hits = Math.min(promptLen - 1, runs.matchPrefix(prompt));
          expect(hits).toBe(Math.min(promptLen - 1, blocks.matchPrefix(prompt)));
          const reserve = all.length - hits;
          const h = holder();
          const ok = runs.admit(h, prompt, hits, reserve);
          expect(ok).toBe(blocks.admit(prompt, hits, reserve));
          if (ok) {
            admitted++;
            live.push({ h, tokens: total, prompt, all, hits, reserve, stage: 'admitted' });
          }
        }
        expect(runs.cachedBlocks()).toBe(blocks.cachedBlocks());
        expect(runs.pinnedBlocks()).toBe(blocks.pinnedBlocks());
        expect(runs.usedBlocks()).toBe(blocks.usedBlocks());
        expect(runs.evictions).toBe(blocks.evictions);
      }
      expect(runLog).toEqual(blockLog);
      // The lives exercised what they are for: evictions, partial runs and sharing.
      expect(admitted).toBeGreaterThan(300);
      expect(blocks.evictions).toBeGreaterThan(capacity);
      expect(runLog.filter((l) => l.startsWith('removed')).length).toBeGreaterThan(20);
    });
  }
});
