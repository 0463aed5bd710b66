import { createHash } from 'node:crypto';

/**
 * SGLang's KV page hash, as its router computes it for KV events: SHA-256 over the
 * parent's full 32-byte digest (nothing for the first page) followed by each token
 * as a u32 little-endian; the published value is the first 8 digest bytes read
 * big-endian as a signed i64. The last page may be partial and is still hashed.
 * Not on the hot path: kept so KV-event ingestion can be added without new hashing.
 */
export function sglangPageHashes(tokens: readonly number[], pageSize: number): bigint[] {
  const out: bigint[] = [];
  let parent: Buffer | undefined;
  for (let start = 0; start < tokens.length; start += pageSize) {
    const page = tokens.slice(start, start + pageSize);
    const bytes = Buffer.allocUnsafe(page.length * 4);
    page.forEach((t, i) => bytes.writeUInt32LE(t >>> 0, i * 4));
    const h = createHash('sha256');
    if (parent) h.update(parent);
    h.update(bytes);
    parent = h.digest();
    out.push(parent.readBigInt64BE(0));
  }
  return out;
}
