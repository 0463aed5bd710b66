import { describe, expect, it } from 'vitest';
import { KEY_CHAIN_ROOT, keyChain, keyChainOf } from '../../src/prefix/index.js';

const tokens = (n: number, seed = 1): number[] => Array.from({ length: n }, (_, i) => (i * 2_654_435_761 + seed) >>> 0);

describe('keyChain: keys that resume from any key (docs/engine-push.md §Keying requests)', () => {
  it("resumed from block k's key, the rest of the chain is the same as from the root", () => {
    const t = tokens(16 * 10);
    const whole = keyChainOf(t, 16);
    for (const k of [1, 3, 9]) {
      const rest = new Array<number>(10 - k);
      const last = keyChain(whole[k - 1]!, t, k * 16, 10 - k, 16, rest);
      expect(rest).toEqual(whole.slice(k));
      expect(last).toBe(whole[9]);
    }
  });

  it.each([
    ['only full blocks are keyed', tokens(40), 16, 2],
    ['no full block, no key', tokens(15), 16, 0],
    ['a block of one token', tokens(5), 1, 5],
  ])('%s', (_name, t, bs, n) => {
    expect(keyChainOf(t, bs)).toHaveLength(n);
  });

  it('equal prefixes give equal keys; the first different block and all after it differ; keys are 52-bit integers', () => {
    const a = tokens(64);
    const b = [...a];
    b[40] = b[40]! + 1;
    const ka = keyChainOf(a, 16);
    const kb = keyChainOf(b, 16);
    expect(kb.slice(0, 2)).toEqual(ka.slice(0, 2));
    for (let i = 2; i < 4; i++) expect(kb[i]).not.toBe(ka[i]);
    for (const k of ka) expect(Number.isSafeInteger(k) && k >= 0 && k < 2 ** 52).toBe(true);
  });

  it('the same tokens cut into other block sizes key differently, and a block does not key like its parent', () => {
    const t = tokens(32);
    expect(keyChainOf(t, 16)[1]).not.toBe(keyChainOf(t, 32)[0]);
    const zeros = new Array<number>(32).fill(0);
    const [k0, k1] = keyChainOf(zeros, 16);
    expect(k0).not.toBe(k1);
    expect(k0).not.toBe(KEY_CHAIN_ROOT);
  });
});
