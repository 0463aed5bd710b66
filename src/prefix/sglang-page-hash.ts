import { digestBytes, digestWords, pageChainWords } from './sha256-pages.js';

/**
 * SGLang's KV page hash, as its router computes it for KV events: SHA-256 over the
 * parent's full 32-byte digest (nothing for the first page) followed by each token
 * as a u32 little-endian; the published value is the first 8 digest bytes read
 * big-endian as a signed i64. The last page may be partial and is still hashed.
 * The chain runs on digest words (src/prefix/sha256-pages.ts).
 */
export function sglangPageHashes(tokens: ArrayLike<number>, pageSize: number): bigint[] {
  const out: bigint[] = [];
  pageChainWords(tokens, 0, tokens.length, pageSize, new Int32Array(8), false, undefined, (d) => {
    out.push(BigInt.asIntN(64, (BigInt(d[0]! >>> 0) << 32n) | BigInt(d[1]! >>> 0)));
  });
  return out;
}

/**
 * The page chain over tokens[from, to), starting after the page whose digest is
 * `parent` (undefined: from the first page): calls `page` with each page's full
 * digest (a Buffer of its own, which the caller may keep), and returns the last one,
 * so a caller can resume the chain later from it.
 */
export function sglangPageChain(
  tokens: ArrayLike<number>,
  from: number,
  to: number,
  pageSize: number,
  parent: Buffer | undefined,
  page: (digest: Buffer) => void,
): Buffer | undefined {
  let last = parent;
  pageChainWords(
    tokens,
    from,
    to,
    pageSize,
    parent === undefined ? new Int32Array(8) : digestWords(parent),
    parent !== undefined,
    undefined,
    (d) => {
      last = digestBytes(d);
      page(last);
    },
  );
  return last;
}
