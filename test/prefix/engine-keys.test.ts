import { describe, expect, it } from 'vitest';
import { blockHashes, engineBlockKeys, foldHash, sglangCheckpointKeys, sglangPageHashes, simWireWords } from '../../src/prefix/index.js';

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
        expect(engineBlockKeys(Int32Array.from(tokens), pageSize, 'sglang')).toEqual(
          sglangPageHashes(tokens.slice(0, full), pageSize).map(fold),
        );
      }
    }
  });
});

describe('engineBlockKeys (sglang): the checkpoints memory is bounded by the keys they hold', () => {
  it('keying many fresh long prompts at pages of 1 holds at most 4 Mi keys, and a resumed prompt still keys exactly', () => {
    const fresh = (seed: number, n: number): Int32Array => {
      let x = seed * 2654435761;
      return Int32Array.from({ length: n }, () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 150_000) + 1);
    };
    const hot = fresh(1, 20_000);
    const want = sglangPageHashes(Array.from(hot.subarray(0, 20_000)), 1).map((h) =>
      foldHash(Number(BigInt.asUintN(64, h) >> 32n), Number(BigInt.asUintN(64, h) & 0xffffffffn)),
    );
    for (let k = 0; k < 100; k++) {
      engineBlockKeys(fresh(100 + k, 50_000), 1, 'sglang');
      if (k % 10 === 0) expect(engineBlockKeys(hot, 1, 'sglang')).toEqual(want);
    }
    // 100 prompts of 50K keys would hold 5 Mi keys: the oldest went.
    expect(sglangCheckpointKeys()).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(sglangCheckpointKeys()).toBeGreaterThan(3 * 1024 * 1024);
    expect(engineBlockKeys(hot, 1, 'sglang')).toEqual(want);
  });
});
