import { ASSISTANT_PROMPT, MESSAGE_CLOSE, eachContentText, messageOpen, renderedChatChars } from './chat-template.js';
import type { ChatMessage } from './chat-template.js';
/**
 * Chained block hashes over token ids: block i's hash covers blocks 0..i, so equal
 * hashes at the same depth mean equal prefixes. Only full blocks are hashed (as vLLM
 * and the router's index do). Hashes are 52-bit integers held in plain numbers:
 * cheap Map keys, no BigInt on the hot path, and a birthday bound of about 1e-4 at
 * a million distinct blocks, which is fine for routing hints.
 */
const TWO32 = 0x1_0000_0000;
const HI_MASK = 0xfffff; // 20 high bits + 32 low bits = 52
const CHAIN_START_HI = 0x6a09e667;
const CHAIN_START_LO = 0xbb67ae85;

export function blockHashes(tokens: ArrayLike<number>, blockSize: number, limit = Infinity): number[] {
  const full = Math.min(Math.floor(tokens.length / blockSize), limit);
  const out = new Array<number>(full);
  hashBlocks(tokens, blockSize, full, CHAIN_START_HI, CHAIN_START_LO, 0, out);
  return out;
}

/**
 * Where blockHashes's chain stands after some whole blocks, so that what follows can
 * be hashed without hashing the prefix again (blockHashesAfter): an engine keys a
 * finished request's output that way, rather than rehashing prompt and output.
 */
export interface BlockHashState {
  readonly hi: number;
  readonly lo: number;
  /** Whole blocks hashed so far: the next block's number in the chain. */
  readonly blocks: number;
}

/** The chain before its first block. */
export const BLOCK_HASH_START: BlockHashState = Object.freeze({ hi: CHAIN_START_HI, lo: CHAIN_START_LO, blocks: 0 });

/** blockHashes of `tokens`, and the chain's state after its last whole block. */
export function blockHashChain(tokens: ArrayLike<number>, blockSize: number): { hashes: number[]; state: BlockHashState } {
  const full = Math.floor(tokens.length / blockSize);
  const hashes = new Array<number>(full);
  hashBlocks(tokens, blockSize, full, CHAIN_START_HI, CHAIN_START_LO, 0, hashes);
  return { hashes, state: { hi: chainEndHi, lo: chainEndLo, blocks: full } };
}

/**
 * The hashes of the whole blocks of `tokens`, chained on from `state`: for a prefix
 * whose chain ends in `state`, blockHashes(prefix ++ tokens) without the prefix's own
 * blocks, the same numbers. `tokens` starts at a block boundary of the sequence.
 */
export function blockHashesAfter(state: BlockHashState, tokens: ArrayLike<number>, blockSize: number): number[] {
  const full = Math.floor(tokens.length / blockSize);
  const out = new Array<number>(full);
  hashBlocks(tokens, blockSize, full, state.hi, state.lo, state.blocks, out);
  return out;
}

// The chain's state after the last hashBlocks, read at once by its caller.
let chainEndHi = CHAIN_START_HI;
let chainEndLo = CHAIN_START_LO;

/** The chain's loop: `full` blocks of `tokens` from state (hi, lo), numbered from `first`, into out[0..full). */
function hashBlocks(
  tokens: ArrayLike<number>,
  blockSize: number,
  full: number,
  hi: number,
  lo: number,
  first: number,
  out: number[],
): void {
  for (let b = 0; b < full; b++) {
    const start = b * blockSize;
    for (let i = start; i < start + blockSize; i++) {
      const t = tokens[i]! >>> 0;
      lo = Math.imul(lo ^ t, 0x01000193);
      hi = Math.imul(hi ^ (t + 0x9e3779b9), 0x85ebca6b);
      hi ^= hi >>> 13;
    }
    // Finalise per block so that the chain state mixes fully before the next block.
    lo = fmix32(lo ^ (first + b));
    hi = fmix32(hi ^ lo);
    out[b] = (hi & HI_MASK) * TWO32 + (lo >>> 0);
  }
  chainEndHi = hi;
  chainEndLo = lo;
}

/** MurmurHash3's 32-bit finaliser: every input bit reaches every output bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Chained hashes over fixed-size chunks of a text's UTF-8 bytes (only full chunks),
 * for routers that key prefixes without tokenizing: 64 bytes is about 16 tokens of
 * English. Chained like blockHashes, read four bytes at a time (hashWords). UTF-8 keeps the prefix property (a text's prefix is a byte prefix),
 * and encoding first is cheaper than reading the string a UTF-16 unit at a time:
 * V8 encodes in bulk, and the loop then reads a typed array (perf/prefix-match.ts
 * measured 4–5× less than hashing code units). `chunkBytes` must be a multiple of 4.
 */
export function textBlockHashes(text: string, chunkBytes: number, limit = Infinity): number[] {
  ensureScratch(text.length);
  return released(hashWords(new Int32Array(scratch, 0, scratchBytes.write(text, 0, 'utf8') >>> 2), chunkBytes, limit));
}

/**
 * One 52-bit hash of a whole text (its UTF-8 bytes, the tail included), for memo
 * tables keyed by long strings: V8 hashes a fresh string of a few hundred kilobytes
 * at about 150 MB/s, this at memory speed (the text key's four-lane loop).
 */
export function textDigest(text: string): number {
  promptBytes.begin(text.length * 3);
  promptBytes.putString(text);
  return promptBytes.digest();
}

/**
 * textBlockHashes of a chat's rendered prompt (renderChat), with the rendering
 * written part by part straight into the scratch area: on a long prompt, building
 * the rendered string (and V8 flattening it to encode it) costs more than hashing it.
 * Also returns the rendered prompt's length in UTF-16 code units, for the token estimate.
 */
export function chatBlockHashes(messages: readonly ChatMessage[], chunkBytes: number): { hashes: number[]; chars: number } {
  const chars = renderedChatChars(messages);
  const p = promptBytes;
  p.begin(chars * 3);
  const put = (s: string): void => p.putString(s);
  for (const m of messages) {
    p.putString(messageOpen(m.role));
    eachContentText(m.content, put);
    p.putString(MESSAGE_CLOSE);
  }
  p.putString(ASSISTANT_PROMPT);
  return { hashes: p.hashes(chunkBytes), chars };
}

/**
 * A prompt's UTF-8 bytes assembled piece by piece in the keying scratch area, then
 * hashed like textBlockHashes: for a reader that finds the prompt's parts in a
 * request body's own bytes and copies them rather than decoding them to strings.
 * One at a time (the scratch area is shared): begin, put…, hashes.
 */
export const promptBytes = {
  at: 0,
  /** Start a prompt of at most `maxBytes` UTF-8 bytes. */
  begin(maxBytes: number): void {
    // Room for a digest's padding too.
    ensureScratch(Math.ceil((maxBytes + 4) / 3));
    this.at = 0;
  },
  putString(s: string): void {
    this.at += scratchBytes.write(s, this.at, 'utf8');
  },
  putBytes(src: Uint8Array, start: number, end: number): void {
    scratchBytes.set(src.subarray(start, end), this.at);
    this.at += end - start;
  },
  /** One Unicode scalar value, UTF-8 encoded. */
  putCodePoint(cp: number): void {
    const b = scratchBytes;
    let at = this.at;
    if (cp < 0x80) b[at++] = cp;
    else if (cp < 0x800) {
      b[at++] = 0xc0 | (cp >> 6);
      b[at++] = 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      b[at++] = 0xe0 | (cp >> 12);
      b[at++] = 0x80 | ((cp >> 6) & 0x3f);
      b[at++] = 0x80 | (cp & 0x3f);
    } else {
      b[at++] = 0xf0 | (cp >> 18);
      b[at++] = 0x80 | ((cp >> 12) & 0x3f);
      b[at++] = 0x80 | ((cp >> 6) & 0x3f);
      b[at++] = 0x80 | (cp & 0x3f);
    }
    this.at = at;
  },
  hashes(chunkBytes: number): number[] {
    return released(hashWords(new Int32Array(scratch, 0, this.at >>> 2), chunkBytes, Infinity));
  },
  /** One 52-bit hash of every byte put (textDigest), the tail included. */
  digest(): number {
    const n = this.at;
    if (n === 0) return 0;
    // The tail padded to a whole word with zeros; the length, mixed in, tells "ab" from "ab\0".
    const padded = (n + 3) & ~3;
    scratchBytes.fill(0, n, padded);
    const h = hashWords(new Int32Array(scratch, 0, padded >>> 2), padded, 1)[0]!;
    const hi = (Math.floor(h / TWO32) ^ n ^ (n >>> 20)) & HI_MASK;
    return released(hi * TWO32 + (h % TWO32));
  },
};

/**
 * The text key's inner loop: one chunk's words go through four independent
 * multiply-rotate lanes (word i to lane i mod 4), seeded from the chain state, then
 * the lanes fold into the chain with the finaliser. One serial lane, as blockHashes
 * has, waits on each multiply; four let the CPU overlap them: 1.7× faster on a
 * 340 KB prompt (perf/prefix-match.ts). Every lane reaches both halves of the key.
 */
function hashWords(words: Int32Array, chunkBytes: number, limit: number): number[] {
  const perChunk = chunkBytes >>> 2;
  const full = Math.min(Math.floor(words.length / perChunk), limit);
  const out = new Array<number>(full);
  const quad = perChunk & ~3;
  let hi = 0x6a09e667;
  let lo = 0xbb67ae85;
  for (let b = 0; b < full; b++) {
    let a = lo;
    let c = hi;
    let d = lo ^ 0x3c6ef372;
    let e = hi ^ 0xa54ff53a;
    const start = b * perChunk;
    const quadEnd = start + quad;
    let i = start;
    for (; i < quadEnd; i += 4) {
      a = Math.imul(a ^ words[i]!, 0x9e3779b1);
      c = Math.imul(c ^ words[i + 1]!, 0x85ebca6b);
      d = Math.imul(d ^ words[i + 2]!, 0xc2b2ae35);
      e = Math.imul(e ^ words[i + 3]!, 0x27d4eb2f);
      a = (a << 13) | (a >>> 19);
      c = (c << 15) | (c >>> 17);
      d = (d << 11) | (d >>> 21);
      e = (e << 17) | (e >>> 15);
    }
    // A chunk of words not a multiple of four (an odd --block-size): the rest go to lane a.
    for (const end = start + perChunk; i < end; i++) a = Math.imul(((a << 13) | (a >>> 19)) ^ words[i]!, 0x9e3779b1);
    lo = fmix32((a ^ Math.imul(c, 0x01000193) ^ b) + Math.imul(d ^ e, 0x9e3779b1));
    hi = fmix32(((c ^ Math.imul(e, 0x01000193)) + Math.imul(a ^ d, 0x85ebca6b)) ^ lo);
    out[b] = (hi & HI_MASK) * TWO32 + (lo >>> 0);
  }
  return out;
}

/**
 * One scratch area, reused by every call and grown (to the next power of two) only
 * for a longer text: keying allocates nothing per request but its result. Safe
 * because hashing is synchronous; the view it returns is valid until the next call.
 */
const SCRATCH_DEFAULT = 1 << 16;
/** A scratch area grown past this for one huge prompt is let go after it, not kept for the process's life. */
const SCRATCH_RETAINED = 8 << 20;
let scratch = new ArrayBuffer(SCRATCH_DEFAULT);
let scratchBytes = Buffer.from(scratch);

function released<T>(result: T): T {
  if (scratch.byteLength > SCRATCH_RETAINED) {
    scratch = new ArrayBuffer(SCRATCH_DEFAULT);
    scratchBytes = Buffer.from(scratch);
  }
  return result;
}

function ensureScratch(utf16Units: number): void {
  // A UTF-16 code unit takes at most 3 UTF-8 bytes.
  const need = utf16Units * 3;
  if (need > scratch.byteLength) {
    scratch = new ArrayBuffer(2 ** Math.ceil(Math.log2(need)));
    scratchBytes = Buffer.from(scratch);
  }
}
