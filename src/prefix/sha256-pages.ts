import { hash } from 'node:crypto';

/**
 * SGLang's page hash is SHA-256 over a short message: the parent page's 32-byte digest
 * (none for the first page) and the page's tokens as u32 little-endian, 4 bytes a token.
 * At SGLang's default page size of 1 that is 36 bytes, one compression block, and a
 * 100K-token prompt is 100K of them in a chain. Through node:crypto each page pays a
 * call into C++, a hash object (createHash) and a fresh Buffer for its digest, which
 * cost several times the compression itself; here the chain runs in JavaScript on
 * 32-bit words, with no allocation per page:
 *
 * - a digest's eight big-endian words are the next page's first eight message words,
 *   so the chain never leaves words (the parent is never written out as bytes);
 * - a token's u32 little-endian bytes, read as SHA-256 reads them (big-endian), are
 *   the token byte-swapped;
 * - the message, its padding and its length live in one reused word buffer, and
 *   the message schedule in sixteen locals.
 *
 * The published key is the digest's first eight bytes, big-endian: words 0 and 1.
 *
 * For pages of many tokens the compression dominates and node:crypto's (SHA-NI where
 * the CPU has it) wins; `pageChainWords` takes the native one-shot `crypto.hash` from
 * NATIVE_FROM_PAGE tokens a page (perf/tokenizer-keying.ts measured the crossing).
 */

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const IV = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/**
 * One SHA-256 compression of the 16 words `m[off, off + 16)` into the state `s`. The
 * schedule is a ring of sixteen locals, and each sixteen rounds are written out, so V8
 * keeps everything in registers: about twice as fast as the textbook loop over a
 * 64-word schedule array with the working variables shifted each round.
 */
function compress(s: Int32Array, m: Int32Array, off: number): void {
  let w0 = m[off + 0]!;
  let w1 = m[off + 1]!;
  let w2 = m[off + 2]!;
  let w3 = m[off + 3]!;
  let w4 = m[off + 4]!;
  let w5 = m[off + 5]!;
  let w6 = m[off + 6]!;
  let w7 = m[off + 7]!;
  let w8 = m[off + 8]!;
  let w9 = m[off + 9]!;
  let w10 = m[off + 10]!;
  let w11 = m[off + 11]!;
  let w12 = m[off + 12]!;
  let w13 = m[off + 13]!;
  let w14 = m[off + 14]!;
  let w15 = m[off + 15]!;
  let a = s[0]!;
  let b = s[1]!;
  let c = s[2]!;
  let d = s[3]!;
  let e = s[4]!;
  let f = s[5]!;
  let g = s[6]!;
  let h = s[7]!;
  for (let k = 0; ; k += 16) {
    // Sixteen rounds. Rather than shift the eight working variables each round, the
    // rounds rotate which variable plays which part; after eight rounds the parts are back.
    h = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) + ((e & f) ^ (~e & g)) + K[k + 0]! + w0) | 0;
    d = (d + h) | 0;
    h = (h + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) ^ (c & (a ^ b)))) | 0;
    g = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) + ((d & e) ^ (~d & f)) + K[k + 1]! + w1) | 0;
    c = (c + g) | 0;
    g = (g + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) + ((h & a) ^ (b & (h ^ a)))) | 0;
    f = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) + ((c & d) ^ (~c & e)) + K[k + 2]! + w2) | 0;
    b = (b + f) | 0;
    f = (f + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) + ((g & h) ^ (a & (g ^ h)))) | 0;
    e = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) + ((b & c) ^ (~b & d)) + K[k + 3]! + w3) | 0;
    a = (a + e) | 0;
    e = (e + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) + ((f & g) ^ (h & (f ^ g)))) | 0;
    d = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) + ((a & b) ^ (~a & c)) + K[k + 4]! + w4) | 0;
    h = (h + d) | 0;
    d = (d + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) + ((e & f) ^ (g & (e ^ f)))) | 0;
    c = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) + ((h & a) ^ (~h & b)) + K[k + 5]! + w5) | 0;
    g = (g + c) | 0;
    c = (c + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) + ((d & e) ^ (f & (d ^ e)))) | 0;
    b = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) + ((g & h) ^ (~g & a)) + K[k + 6]! + w6) | 0;
    f = (f + b) | 0;
    b = (b + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) + ((c & d) ^ (e & (c ^ d)))) | 0;
    a = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) + ((f & g) ^ (~f & h)) + K[k + 7]! + w7) | 0;
    e = (e + a) | 0;
    a = (a + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) + ((b & c) ^ (d & (b ^ c)))) | 0;
    h = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) + ((e & f) ^ (~e & g)) + K[k + 8]! + w8) | 0;
    d = (d + h) | 0;
    h = (h + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) ^ (c & (a ^ b)))) | 0;
    g = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) + ((d & e) ^ (~d & f)) + K[k + 9]! + w9) | 0;
    c = (c + g) | 0;
    g = (g + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) + ((h & a) ^ (b & (h ^ a)))) | 0;
    f = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) + ((c & d) ^ (~c & e)) + K[k + 10]! + w10) | 0;
    b = (b + f) | 0;
    f = (f + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) + ((g & h) ^ (a & (g ^ h)))) | 0;
    e = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) + ((b & c) ^ (~b & d)) + K[k + 11]! + w11) | 0;
    a = (a + e) | 0;
    e = (e + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) + ((f & g) ^ (h & (f ^ g)))) | 0;
    d = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) + ((a & b) ^ (~a & c)) + K[k + 12]! + w12) | 0;
    h = (h + d) | 0;
    d = (d + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) + ((e & f) ^ (g & (e ^ f)))) | 0;
    c = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) + ((h & a) ^ (~h & b)) + K[k + 13]! + w13) | 0;
    g = (g + c) | 0;
    c = (c + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) + ((d & e) ^ (f & (d ^ e)))) | 0;
    b = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) + ((g & h) ^ (~g & a)) + K[k + 14]! + w14) | 0;
    f = (f + b) | 0;
    b = (b + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) + ((c & d) ^ (e & (c ^ d)))) | 0;
    a = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) + ((f & g) ^ (~f & h)) + K[k + 15]! + w15) | 0;
    e = (e + a) | 0;
    a = (a + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) + ((b & c) ^ (d & (b ^ c)))) | 0;
    if (k === 48) break;
    // The next sixteen schedule words, in place.
    w0 =
      ((((w14 >>> 17) | (w14 << 15)) ^ ((w14 >>> 19) | (w14 << 13)) ^ (w14 >>> 10)) +
        w9 +
        (((w1 >>> 7) | (w1 << 25)) ^ ((w1 >>> 18) | (w1 << 14)) ^ (w1 >>> 3)) +
        w0) |
      0;
    w1 =
      ((((w15 >>> 17) | (w15 << 15)) ^ ((w15 >>> 19) | (w15 << 13)) ^ (w15 >>> 10)) +
        w10 +
        (((w2 >>> 7) | (w2 << 25)) ^ ((w2 >>> 18) | (w2 << 14)) ^ (w2 >>> 3)) +
        w1) |
      0;
    w2 =
      ((((w0 >>> 17) | (w0 << 15)) ^ ((w0 >>> 19) | (w0 << 13)) ^ (w0 >>> 10)) +
        w11 +
        (((w3 >>> 7) | (w3 << 25)) ^ ((w3 >>> 18) | (w3 << 14)) ^ (w3 >>> 3)) +
        w2) |
      0;
    w3 =
      ((((w1 >>> 17) | (w1 << 15)) ^ ((w1 >>> 19) | (w1 << 13)) ^ (w1 >>> 10)) +
        w12 +
        (((w4 >>> 7) | (w4 << 25)) ^ ((w4 >>> 18) | (w4 << 14)) ^ (w4 >>> 3)) +
        w3) |
      0;
    w4 =
      ((((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10)) +
        w13 +
        (((w5 >>> 7) | (w5 << 25)) ^ ((w5 >>> 18) | (w5 << 14)) ^ (w5 >>> 3)) +
        w4) |
      0;
    w5 =
      ((((w3 >>> 17) | (w3 << 15)) ^ ((w3 >>> 19) | (w3 << 13)) ^ (w3 >>> 10)) +
        w14 +
        (((w6 >>> 7) | (w6 << 25)) ^ ((w6 >>> 18) | (w6 << 14)) ^ (w6 >>> 3)) +
        w5) |
      0;
    w6 =
      ((((w4 >>> 17) | (w4 << 15)) ^ ((w4 >>> 19) | (w4 << 13)) ^ (w4 >>> 10)) +
        w15 +
        (((w7 >>> 7) | (w7 << 25)) ^ ((w7 >>> 18) | (w7 << 14)) ^ (w7 >>> 3)) +
        w6) |
      0;
    w7 =
      ((((w5 >>> 17) | (w5 << 15)) ^ ((w5 >>> 19) | (w5 << 13)) ^ (w5 >>> 10)) +
        w0 +
        (((w8 >>> 7) | (w8 << 25)) ^ ((w8 >>> 18) | (w8 << 14)) ^ (w8 >>> 3)) +
        w7) |
      0;
    w8 =
      ((((w6 >>> 17) | (w6 << 15)) ^ ((w6 >>> 19) | (w6 << 13)) ^ (w6 >>> 10)) +
        w1 +
        (((w9 >>> 7) | (w9 << 25)) ^ ((w9 >>> 18) | (w9 << 14)) ^ (w9 >>> 3)) +
        w8) |
      0;
    w9 =
      ((((w7 >>> 17) | (w7 << 15)) ^ ((w7 >>> 19) | (w7 << 13)) ^ (w7 >>> 10)) +
        w2 +
        (((w10 >>> 7) | (w10 << 25)) ^ ((w10 >>> 18) | (w10 << 14)) ^ (w10 >>> 3)) +
        w9) |
      0;
    w10 =
      ((((w8 >>> 17) | (w8 << 15)) ^ ((w8 >>> 19) | (w8 << 13)) ^ (w8 >>> 10)) +
        w3 +
        (((w11 >>> 7) | (w11 << 25)) ^ ((w11 >>> 18) | (w11 << 14)) ^ (w11 >>> 3)) +
        w10) |
      0;
    w11 =
      ((((w9 >>> 17) | (w9 << 15)) ^ ((w9 >>> 19) | (w9 << 13)) ^ (w9 >>> 10)) +
        w4 +
        (((w12 >>> 7) | (w12 << 25)) ^ ((w12 >>> 18) | (w12 << 14)) ^ (w12 >>> 3)) +
        w11) |
      0;
    w12 =
      ((((w10 >>> 17) | (w10 << 15)) ^ ((w10 >>> 19) | (w10 << 13)) ^ (w10 >>> 10)) +
        w5 +
        (((w13 >>> 7) | (w13 << 25)) ^ ((w13 >>> 18) | (w13 << 14)) ^ (w13 >>> 3)) +
        w12) |
      0;
    w13 =
      ((((w11 >>> 17) | (w11 << 15)) ^ ((w11 >>> 19) | (w11 << 13)) ^ (w11 >>> 10)) +
        w6 +
        (((w14 >>> 7) | (w14 << 25)) ^ ((w14 >>> 18) | (w14 << 14)) ^ (w14 >>> 3)) +
        w13) |
      0;
    w14 =
      ((((w12 >>> 17) | (w12 << 15)) ^ ((w12 >>> 19) | (w12 << 13)) ^ (w12 >>> 10)) +
        w7 +
        (((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3)) +
        w14) |
      0;
    w15 =
      ((((w13 >>> 17) | (w13 << 15)) ^ ((w13 >>> 19) | (w13 << 13)) ^ (w13 >>> 10)) +
        w8 +
        (((w0 >>> 7) | (w0 << 25)) ^ ((w0 >>> 18) | (w0 << 14)) ^ (w0 >>> 3)) +
        w15) |
      0;
  }
  s[0] = (s[0]! + a) | 0;
  s[1] = (s[1]! + b) | 0;
  s[2] = (s[2]! + c) | 0;
  s[3] = (s[3]! + d) | 0;
  s[4] = (s[4]! + e) | 0;
  s[5] = (s[5]! + f) | 0;
  s[6] = (s[6]! + g) | 0;
  s[7] = (s[7]! + h) | 0;
}

/** A token's u32 little-endian bytes as the big-endian word SHA-256 reads them. */
function swap(t: number): number {
  return ((t & 0xff) << 24) | ((t & 0xff00) << 8) | ((t >>> 8) & 0xff00) | (t >>> 24);
}

/** The message words of one page, sized for the largest page seen. */
let M = new Int32Array(64);

/**
 * SHA-256 of one page in words: `state` holds the parent's digest words on entry
 * (ignored when `hasParent` is false) and the page's digest words on return. The page
 * is tokens[start, end).
 */
function pageDigest(state: Int32Array, hasParent: boolean, tokens: ArrayLike<number>, start: number, end: number): void {
  const n = end - start;
  const head = hasParent ? 8 : 0;
  const bytes = (head + n) * 4;
  const blocks = (bytes + 9 + 63) >>> 6;
  const words = blocks * 16;
  if (M.length < words) M = new Int32Array(words * 2);
  const m = M;
  if (hasParent) for (let i = 0; i < 8; i++) m[i] = state[i]!;
  for (let i = 0; i < n; i++) m[head + i] = swap(tokens[start + i]! >>> 0);
  m[head + n] = 0x80000000 | 0;
  for (let i = head + n + 1; i < words - 1; i++) m[i] = 0;
  m[words - 1] = bytes * 8; // the length in bits; under 2^32 for any page that fits in memory here
  for (let i = 0; i < 8; i++) state[i] = IV[i]!;
  for (let k = 0; k < blocks; k++) compress(state, m, k * 16);
}

/**
 * From this many tokens a page (five compression blocks with the parent), node:crypto's
 * one-shot `crypto.hash` is faster than the JavaScript compression: its call costs about
 * 1.3 µs whatever the page, its compression (SHA-NI here) little more, while the
 * JavaScript costs about 0.3 µs a block (perf/tokenizer-keying.ts: at 48 tokens a page
 * they tie, at 64 the native call wins by a fifth, at 256 by half).
 */
export const NATIVE_FROM_PAGE = 54;

let native: { buf: Buffer; u32: Uint32Array; pageSize: number } | undefined;
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** As pageDigest, through node:crypto's one-shot hash. */
function pageDigestNative(state: Int32Array, hasParent: boolean, tokens: ArrayLike<number>, start: number, end: number): void {
  const n = end - start;
  if (native === undefined || native.pageSize < n) {
    const ab = new ArrayBuffer(32 + 4 * n);
    native = { buf: Buffer.from(ab), u32: new Uint32Array(ab), pageSize: n };
  }
  const { buf, u32 } = native;
  const head = hasParent ? 8 : 0;
  if (hasParent) for (let i = 0; i < 8; i++) buf.writeInt32BE(state[i]!, i * 4);
  if (LITTLE_ENDIAN) for (let i = 0; i < n; i++) u32[head + i] = tokens[start + i]! >>> 0;
  else for (let i = 0; i < n; i++) buf.writeUInt32LE(tokens[start + i]! >>> 0, (head + i) * 4);
  const d = hash('sha256', buf.subarray(0, (head + n) * 4), 'buffer');
  for (let i = 0; i < 8; i++) state[i] = d.readInt32BE(i * 4);
}

/** Digest words (8 × i32, big-endian words of the 32-byte digest) to the digest's bytes. */
export function digestBytes(words: ArrayLike<number>): Buffer {
  const out = Buffer.allocUnsafe(32);
  for (let i = 0; i < 8; i++) out.writeInt32BE(words[i]! | 0, i * 4);
  return out;
}

/** The digest's bytes to its words, the form pageChainWords chains from. */
export function digestWords(digest: Uint8Array): Int32Array {
  const b = Buffer.from(digest.buffer, digest.byteOffset, 32);
  const out = new Int32Array(8);
  for (let i = 0; i < 8; i++) out[i] = b.readInt32BE(i * 4);
  return out;
}

export type PageHasher = 'js' | 'native';

/** Which implementation pageChainWords uses for pages of this many tokens. */
export function pageHasherFor(pageSize: number): PageHasher {
  return pageSize >= NATIVE_FROM_PAGE ? 'native' : 'js';
}

/**
 * SGLang's page chain over tokens[from, to) in pages of `pageSize` (the last may be
 * partial), in words. `state` holds the parent page's digest words when `hasParent`
 * (else the chain starts at the first page) and, on return, the last page's. Each
 * page's published key, folded as foldHash does (the digest's words 0 and 1), goes to
 * `keys` (when given) at `keys[keysAt]`, `keys[keysAt + 1]`, … (by default appended), and
 * `page` (when given) sees each page's digest words (the `state` array itself: copy
 * what is kept). Returns the number of pages hashed.
 */
export function pageChainWords(
  tokens: ArrayLike<number>,
  from: number,
  to: number,
  pageSize: number,
  state: Int32Array,
  hasParent: boolean,
  keys?: number[],
  page?: (digest: Int32Array) => void,
  hasher: PageHasher = pageHasherFor(pageSize),
  keysAt = keys === undefined ? 0 : keys.length,
): number {
  const digest = hasher === 'native' ? pageDigestNative : pageDigest;
  let pages = 0;
  let parent = hasParent;
  for (let start = from; start < to; start += pageSize) {
    digest(state, parent, tokens, start, Math.min(start + pageSize, to));
    parent = true;
    if (keys !== undefined) {
      const hi = state[0]!;
      keys[keysAt + pages] = (hi & 0xfffff) * 0x1_0000_0000 + ((state[1]! ^ (hi >>> 20)) >>> 0);
    }
    pages++;
    if (page !== undefined) page(state);
  }
  return pages;
}
