import { createHash } from 'node:crypto';

/**
 * SGLang's KV page hash, as its router computes it for KV events: SHA-256 over the
 * parent's full 32-byte digest (nothing for the first page) followed by each token
 * as a u32 little-endian; the published value is the first 8 digest bytes read
 * big-endian as a signed i64. The last page may be partial and is still hashed.
 */
export function sglangPageHashes(tokens: readonly number[], pageSize: number): bigint[] {
  const out: bigint[] = [];
  sglangPageChain(tokens, 0, tokens.length, pageSize, undefined, (digest) => out.push(digest.readBigInt64BE(0)));
  return out;
}

/**
 * The page chain over tokens[from, to), starting after the page whose digest is
 * `parent` (undefined: from the first page): calls `page` with each page's full
 * digest, and returns the last one, so a caller can resume the chain later from it.
 */
export function sglangPageChain(
  tokens: ArrayLike<number>,
  from: number,
  to: number,
  pageSize: number,
  parent: Buffer | undefined,
  page: (digest: Buffer) => void,
): Buffer | undefined {
  const bytes = Buffer.allocUnsafe(pageSize * 4);
  for (let start = from; start < to; start += pageSize) {
    const end = Math.min(start + pageSize, to);
    for (let i = start; i < end; i++) bytes.writeUInt32LE(tokens[i]! >>> 0, (i - start) * 4);
    const h = createHash('sha256');
    if (parent) h.update(parent);
    h.update(bytes.subarray(0, (end - start) * 4));
    parent = h.digest();
    page(parent);
  }
  return parent;
}
