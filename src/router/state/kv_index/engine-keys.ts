import { blockHashes, sglangPageHashes, simWireWords } from '../../../prefix/index.js';

/**
 * The router's 52-bit index key for an engine's 64-bit block hash. The prefix index
 * keys by plain numbers (exact to 2^53), so the 64 bits are folded: the low 20 bits of
 * the high word stay, and its top 12 bits are mixed into the low word. A simulator
 * hash has 12 zero bits at the bottom (simWireWords), which the fold fills, so the
 * simulator's keys stay distinct; real engines' hashes are uniform, so folding costs
 * a collision rate of 2^-52 per pair.
 */
export function foldHash(hi: number, lo: number): number {
  return (hi & 0xfffff) * 0x1_0000_0000 + ((lo ^ (hi >>> 20)) >>> 0);
}

/**
 * How an engine hashes its KV blocks, so the router can compute a request's keys the
 * same way (docs/engine-push.md §Keying requests):
 * - `sim`: the simulator's chained hash, written as simWireWords;
 * - `sglang`: SGLang's SHA-256 page chain (sglangPageHashes);
 * vLLM's default hash pickles Python objects and cannot be reproduced outside it.
 */
export type EngineHashScheme = 'sim' | 'sglang';

/** Index keys of a token sequence's full blocks, as the engine's events name them. */
export function engineBlockKeys(tokens: readonly number[], blockSize: number, scheme: EngineHashScheme): number[] {
  if (scheme === 'sim') {
    return blockHashes(tokens, blockSize).map((h) => {
      const { hi, lo } = simWireWords(h);
      return foldHash(hi, lo);
    });
  }
  const full = Math.floor(tokens.length / blockSize) * blockSize;
  return sglangPageHashes(tokens.slice(0, full), blockSize).map((v) => {
    const u = BigInt.asUintN(64, v);
    return foldHash(Number(u >> 32n), Number(u & 0xffffffffn));
  });
}
