import { describe, expect, it } from 'vitest';
import { PrefixIndex } from '../../src/router/state/prefix-index/index.js';
import { blockHashes } from '../../src/prefix/index.js';
import { Rng } from '../../src/sim/rng.js';

const chain = (seed: number, n: number): number[] =>
  blockHashes(
    Array.from({ length: n * 4 }, (_, i) => seed * 1000 + i),
    4,
  );

function matches(index: PrefixIndex, hashes: number[]): Record<number, number> {
  const buf = index.newMatchBuffer();
  const n = index.match(hashes, buf);
  const out: Record<number, number> = {};
  for (let i = 0; i < n; i++) out[buf.slots[i]!] = buf.depths[i]!;
  return out;
}

describe('PrefixIndex', () => {
  it('answers the leading matched blocks per worker', () => {
    const idx = new PrefixIndex({ maxBlocks: 1000 });
    const a = chain(1, 10);
    idx.record(0, a, 10);
    idx.record(1, a, 4);
    expect(matches(idx, a)).toEqual({ 0: 10, 1: 4 });
    expect(matches(idx, a.slice(0, 6))).toEqual({ 0: 6, 1: 4 });
    expect(matches(idx, chain(2, 10))).toEqual({});
  });

  it('keeps at most K owners per block, most recent first', () => {
    const idx = new PrefixIndex({ maxBlocks: 100, ownersPerBlock: 3 });
    const a = chain(3, 2);
    for (const slot of [0, 1, 2, 3]) idx.record(slot, a);
    expect(Object.keys(matches(idx, a)).map(Number).sort()).toEqual([1, 2, 3]);
    idx.record(1, a); // refresh 1: still three, 1 is most recent
    idx.record(4, a); // evicts the oldest, 2
    expect(Object.keys(matches(idx, a)).map(Number).sort()).toEqual([1, 3, 4]);
  });

  it('stays within capacity, evicting blocks not recently used (CLOCK)', () => {
    const idx = new PrefixIndex({ maxBlocks: 50 });
    const hot = chain(9, 10);
    idx.record(0, hot);
    for (let s = 0; s < 40; s++) {
      idx.record(1, chain(100 + s, 5));
      idx.record(0, hot); // keep the hot prefix referenced
      expect(idx.size).toBeLessThanOrEqual(50);
    }
    expect(idx.evictions).toBeGreaterThan(0);
    expect(matches(idx, hot)[0]).toBe(10);
  });

  it('forgets a worker everywhere and frees blocks it alone held', () => {
    const idx = new PrefixIndex({ maxBlocks: 100 });
    const a = chain(5, 8);
    idx.record(0, a);
    idx.record(1, a, 3);
    idx.forgetWorker(0);
    expect(matches(idx, a)).toEqual({ 1: 3 });
    expect(idx.size).toBe(3);
  });

  it('agrees with a naive model over random operations (table deletion keeps lookups right)', () => {
    const rng = new Rng(11);
    const idx = new PrefixIndex({ maxBlocks: 10_000, ownersPerBlock: 16 });
    const model = new Map<number, Set<number>>();
    const chains = Array.from({ length: 30 }, (_, i) => chain(i, 20));
    for (let step = 0; step < 2000; step++) {
      const c = chains[rng.int(chains.length)]!;
      const slot = rng.int(6);
      if (rng.next() < 0.02) {
        idx.forgetWorker(slot);
        for (const s of model.values()) s.delete(slot);
        continue;
      }
      const n = 1 + rng.int(c.length);
      idx.record(slot, c, n);
      for (let i = 0; i < n; i++) (model.get(c[i]!) ?? model.set(c[i]!, new Set()).get(c[i]!)!).add(slot);
    }
    for (const c of chains) {
      const want: Record<number, number> = {};
      for (let slot = 0; slot < 6; slot++) {
        let d = 0;
        while (d < c.length && model.get(c[d]!)?.has(slot)) d++;
        if (d > 0) want[slot] = d;
      }
      expect(matches(idx, c)).toEqual(want);
    }
  });

  it('matches a plain model of the index on random histories (owners capped and reordered most recent first)', () => {
    const rng = new Rng(2024);
    for (let run = 0; run < 200; run++) {
      const K = 1 + rng.int(8);
      const idx = new PrefixIndex({ maxBlocks: 100_000, ownersPerBlock: K });
      // The model: per block hash, its owners, most recent first, at most K.
      const model = new Map<number, number[]>();
      const prefixes = Array.from({ length: 3 }, (_, p) => chain(run * 10 + p, 1 + rng.int(40)));
      for (let r = 0; r < 1 + rng.int(30); r++) {
        const hashes = prefixes[rng.int(prefixes.length)]!;
        const slot = rng.int(12);
        const count = rng.int(hashes.length + 1);
        idx.record(slot, hashes, count);
        for (const h of hashes.slice(0, count)) model.set(h, [slot, ...(model.get(h) ?? []).filter((s) => s !== slot)].slice(0, K));
      }
      for (const hashes of prefixes) {
        const expected: Record<number, number> = {};
        for (const slot of model.get(hashes[0]!) ?? []) {
          let depth = 0;
          while (depth < hashes.length && (model.get(hashes[depth]!) ?? []).includes(slot)) depth++;
          expected[slot] = depth;
        }
        expect(matches(idx, hashes), `run ${run}`).toEqual(expected);
      }
    }
  });

  it('records the same with hints from an earlier match, stale or garbage, as without them', () => {
    const rng = new Rng(77);
    // Small enough to evict and reuse entries between a match and its record.
    const plain = new PrefixIndex({ maxBlocks: 300, ownersPerBlock: 4 });
    const hinted = new PrefixIndex({ maxBlocks: 300, ownersPerBlock: 4 });
    const chains = Array.from({ length: 25 }, (_, i) => chain(i, 5 + rng.int(30)));
    const pending: { hashes: number[]; hints: Int32Array }[] = [];
    for (let step = 0; step < 4000; step++) {
      const hashes = chains[rng.int(chains.length)]!;
      const hints = new Int32Array(hashes.length);
      if (rng.next() < 0.1) for (let i = 0; i < hints.length; i++) hints[i] = rng.int(400) - 50;
      else hinted.match(hashes, hinted.newMatchBuffer(), hashes.length, hints);
      pending.push({ hashes, hints });
      // Records land later and out of order, as responses do.
      while (pending.length > 0 && rng.next() < 0.5) {
        const { hashes: h, hints: hs } = pending.splice(rng.int(pending.length), 1)[0]!;
        const slot = rng.int(6);
        plain.record(slot, h);
        hinted.record(slot, h, h.length, hs);
      }
    }
    expect(hinted.digest()).toEqual(plain.digest());
    expect(hinted.evictions).toBe(plain.evictions);
    expect(hinted.evictions).toBeGreaterThan(0);
    for (const c of chains) expect(matches(hinted, c)).toEqual(matches(plain, c));
  });
});
