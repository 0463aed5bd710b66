import { describe, expect, it } from 'vitest';
import { blockHashes, engineBlockKeys, foldHash, sglangPageHashes, simWireWords } from '../../src/prefix/index.js';

const fold = (v: bigint): number => {
  const u = BigInt.asUintN(64, v);
  return foldHash(Number(u >> 32n), Number(u & 0xffffffffn));
};

describe('engineBlockKeys', () => {
  it('sim: the simulator hash, as it goes on the wire, folded', () => {
    const tokens = Array.from({ length: 100 }, (_, i) => i * 7);
    const want = blockHashes(tokens, 16).map((h) => {
      const { hi, lo } = simWireWords(h);
      return foldHash(hi, lo);
    });
    expect(engineBlockKeys(tokens, 16, 'sim')).toEqual(want);
    expect(new Set(want).size).toBe(6);
  });

  it('sglang: resuming from remembered checkpoints gives exactly the full page chain, whatever was seen before', () => {
    let seed = 9;
    const rnd = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const system = Array.from({ length: 5000 }, () => rnd(150_000));
    for (const pageSize of [16, 64, 1]) {
      for (let k = 0; k < 6; k++) {
        // The same long beginning, then a different tail of varying length: later calls resume from checkpoints.
        const tokens = [...system.slice(0, pageSize === 1 ? 1500 : 5000), ...Array.from({ length: rnd(3000) }, () => rnd(150_000))];
        const full = Math.floor(tokens.length / pageSize) * pageSize;
        expect(engineBlockKeys(Int32Array.from(tokens), pageSize, 'sglang')).toEqual(sglangPageHashes(tokens.slice(0, full), pageSize).map(fold));
      }
    }
  });
});
