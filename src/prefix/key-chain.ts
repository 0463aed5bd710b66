import { fmix32 } from './block-hash.js';

/**
 * Block keys chained through the key itself: key i mixes key i−1 with block i's
 * tokens. Unlike blockHashes, whose chain state is wider than its output, a chain can
 * resume from any key it produced. That is what keying an engine's KV events by their
 * tokens needs: vLLM's events carry each stored run's token ids and its parent block's
 * hash, not something the router can recompute, so the router keys the run from the
 * key it gave the parent, and a request's blocks come out the same way from the root
 * (docs/engine-push.md §Keying requests). Keys are 52-bit integers, like every index key.
 */
export const KEY_CHAIN_ROOT = 0;

const TWO32 = 0x1_0000_0000;
const HI_MASK = 0xfffff;

/**
 * Keys of `blocks` full blocks of `blockSize` tokens starting at `tokens[from]`, the
 * first chained to `parent` (KEY_CHAIN_ROOT at a prompt's start), written to
 * `out[outAt…]`. Returns the last key (or `parent` when `blocks` is 0).
 */
export function keyChain(
  parent: number,
  tokens: ArrayLike<number>,
  from: number,
  blocks: number,
  blockSize: number,
  out: { [i: number]: number },
  outAt = 0,
): number {
  let key = parent;
  for (let b = 0; b < blocks; b++) {
    let hi = Math.floor(key / TWO32) ^ 0x510e527f;
    let lo = (key >>> 0) ^ 0x9b05688c;
    const start = from + b * blockSize;
    for (let i = start; i < start + blockSize; i++) {
      const t = tokens[i]! >>> 0;
      lo = Math.imul(lo ^ t, 0x01000193);
      hi = Math.imul(hi ^ (t + 0x9e3779b9), 0x85ebca6b);
      hi ^= hi >>> 13;
    }
    lo = fmix32(lo ^ blockSize);
    hi = fmix32(hi ^ lo);
    key = (hi & HI_MASK) * TWO32 + (lo >>> 0);
    out[outAt + b] = key;
  }
  return key;
}

/** The keys of a token sequence's full blocks, from the root. */
export function keyChainOf(tokens: ArrayLike<number>, blockSize: number): number[] {
  const n = Math.floor(tokens.length / blockSize);
  const out = new Array<number>(n);
  keyChain(KEY_CHAIN_ROOT, tokens, 0, n, blockSize, out);
  return out;
}
