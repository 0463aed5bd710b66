import { describe, expect, it } from 'vitest';
import { BLOCK_HASH_START, blockHashChain, blockHashes, blockHashesAfter } from '../../src/prefix/index.js';

const tokens = (n: number, seed: number): number[] => Array.from({ length: n }, (_, i) => (Math.imul(i + 1, 0x9e3779b1) ^ seed) >>> 0);

describe('a resumable block-hash chain', () => {
  it.each([
    [0, 0],
    [15, 7],
    [16, 0],
    [100, 37],
    [512, 343],
    [12_000, 1],
  ])('a %i-token prefix, then %i tokens: the same hashes as blockHashes of the whole', (n, more) => {
    const prefix = tokens(n, 1);
    const rest = tokens(more, 2);
    const { hashes, state } = blockHashChain(prefix, 16);
    expect(hashes).toEqual(blockHashes(prefix, 16));
    expect(state.blocks).toBe(Math.floor(n / 16));
    // What follows the prefix's whole blocks: its partial block's tokens, then the rest.
    const after = blockHashesAfter(state, [...prefix.slice(state.blocks * 16), ...rest], 16);
    expect([...hashes, ...after]).toEqual(blockHashes([...prefix, ...rest], 16));
  });

  it('starts where blockHashes starts', () => {
    const t = tokens(80, 3);
    expect(blockHashesAfter(BLOCK_HASH_START, t, 16)).toEqual(blockHashes(t, 16));
  });
});
