/**
 * Chained block hashes over token ids: block i's hash covers blocks 0..i, so equal
 * hashes at the same depth mean equal prefixes. Only full blocks are hashed (as vLLM
 * and the router's index do). Hashes are 52-bit integers held in plain numbers:
 * cheap Map keys, no BigInt on the hot path, and a birthday bound of about 1e-4 at
 * a million distinct blocks, which is fine for routing hints.
 */
const TWO32 = 0x1_0000_0000;
const HI_MASK = 0xfffff; // 20 high bits + 32 low bits = 52

export function blockHashes(tokens: ArrayLike<number>, blockSize: number, limit = Infinity): number[] {
  const full = Math.min(Math.floor(tokens.length / blockSize), limit);
  const out = new Array<number>(full);
  let hi = 0x6a09e667;
  let lo = 0xbb67ae85;
  for (let b = 0; b < full; b++) {
    const start = b * blockSize;
    for (let i = start; i < start + blockSize; i++) {
      const t = tokens[i]! >>> 0;
      lo = Math.imul(lo ^ t, 0x01000193);
      hi = Math.imul(hi ^ (t + 0x9e3779b9), 0x85ebca6b);
      hi ^= hi >>> 13;
    }
    // Finalise per block so that the chain state mixes fully before the next block.
    lo = fmix32(lo ^ b);
    hi = fmix32(hi ^ lo);
    out[b] = (hi & HI_MASK) * TWO32 + (lo >>> 0);
  }
  return out;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Chained hashes over fixed-size character chunks of a text (only full chunks), for
 * routers that key prefixes without tokenizing: 64 characters is about 16 tokens.
 * Same chaining and finaliser as blockHashes. The loop is written twice on purpose:
 * a shared loop taking an element accessor costs a call per character on the
 * router's hot path (bench/prefix-match.ts).
 */
export function textBlockHashes(text: string, chunkChars: number, limit = Infinity): number[] {
  const full = Math.min(Math.floor(text.length / chunkChars), limit);
  const out = new Array<number>(full);
  let hi = 0x6a09e667;
  let lo = 0xbb67ae85;
  for (let b = 0; b < full; b++) {
    const start = b * chunkChars;
    for (let i = start; i < start + chunkChars; i++) {
      const t = text.charCodeAt(i);
      lo = Math.imul(lo ^ t, 0x01000193);
      hi = Math.imul(hi ^ (t + 0x9e3779b9), 0x85ebca6b);
      hi ^= hi >>> 13;
    }
    lo = fmix32(lo ^ b);
    hi = fmix32(hi ^ lo);
    out[b] = (hi & HI_MASK) * TWO32 + (lo >>> 0);
  }
  return out;
}
