/**
 * A table bucket for a 52-bit block hash: both halves folded and spread (Fibonacci
 * hashing), so that hashes whose low bits happen to agree do not all land in one probe
 * run. Shared by the router's prefix index and the simulator's block cache, both
 * open-addressing tables over typed arrays.
 */
export function hashBucket(h: number): number {
  const hi = Math.floor(h / 4294967296) >>> 0;
  return Math.imul((h >>> 0) ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 0;
}
