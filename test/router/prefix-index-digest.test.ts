import { describe, expect, it } from 'vitest';
import { PrefixIndex } from '../../src/router/index.js';

/** The digest replicas compare (docs/routing.md §Prefix from engine events). */
function index(): PrefixIndex {
  const ix = new PrefixIndex({ maxBlocks: 10_000, ownersPerBlock: 4 });
  ['http://a', 'http://b', 'http://c'].forEach((u, slot) => ix.setOwnerTag(slot, u));
  return ix;
}
const chain = (seed: number, n: number): number[] => Array.from({ length: n }, (_, i) => seed * 1_000_003 + i * 7919);

describe('PrefixIndex digest', () => {
  it('depends on the (block, owner) pairs only, not on the order they came in', () => {
    const a = index();
    const b = index();
    a.record(0, chain(1, 50));
    a.record(1, chain(2, 30));
    a.record(2, chain(1, 20));
    b.record(2, chain(1, 20));
    b.record(1, chain(2, 30));
    b.record(0, chain(1, 50));
    b.record(0, chain(1, 50)); // again: no new pair
    expect(b.digest()).toEqual(a.digest());
    expect(a.digest()).toMatchObject({ blocks: 80, pairs: 100 });
  });

  it('owners named alike on two replicas compare equal whatever their local slots', () => {
    const a = new PrefixIndex({ maxBlocks: 1000 });
    const b = new PrefixIndex({ maxBlocks: 1000 });
    a.setOwnerTag(0, 'http://x#0');
    b.setOwnerTag(5, 'http://x#0');
    a.record(0, chain(3, 10));
    b.record(5, chain(3, 10));
    expect(a.digest()).toEqual(b.digest());
  });

  it('removing what was added, block by block or by forgetting an owner, takes the digest back', () => {
    const ix = index();
    const empty = ix.digest();
    ix.record(0, chain(1, 40));
    const one = ix.digest();
    ix.record(1, chain(1, 40));
    expect(ix.digest()).not.toEqual(one);
    for (const h of chain(1, 40)) ix.removeOwner(1, h);
    expect(ix.digest()).toEqual(one);
    ix.forgetWorker(0);
    expect(ix.digest()).toEqual(empty);
    expect(ix.size).toBe(0);
  });

  it('an owner that falls off a full block, and a block evicted, leave the pairs counted right', () => {
    const ix = new PrefixIndex({ maxBlocks: 8, ownersPerBlock: 2 });
    for (let s = 0; s < 3; s++) ix.setOwnerTag(s, `w${s}`);
    ix.record(0, [1]);
    ix.record(1, [1]);
    ix.record(2, [1]); // owner 0 falls off
    expect(ix.digest().pairs).toBe(2);
    for (let k = 0; k < 20; k++) ix.record(0, [100 + k]); // evicts down to 8 blocks
    const d = ix.digest();
    expect(d.blocks).toBe(8);
    // Rebuild what the index holds from its own answers: the pairs agree.
    let pairs = 0;
    const out = ix.newMatchBuffer();
    for (const h of [1, ...Array.from({ length: 20 }, (_, k) => 100 + k)]) pairs += ix.match([h], out);
    expect(pairs).toBe(d.pairs);
  });
});
