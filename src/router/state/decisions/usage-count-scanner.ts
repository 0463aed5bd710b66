/** The field SGLang and vLLM write under usage.prompt_tokens_details (and SGLang's meta_info). */
const CACHED_TOKENS = Buffer.from('"cached_tokens"');
/** Bytes kept from the end of a chunk, so a key cut between two chunks is still found. */
const CARRY = 40;

/**
 * Finds a usage count in a response as it streams past: the value of the last
 * `"cached_tokens": N` (or another key given) in the body, since a stream's usage
 * chunk comes last. The decision record reads what the engine reused with it, a
 * capture the tokens it generated. It reads the bytes the router relays anyway,
 * looking only for the key (Buffer.indexOf), and never parses the JSON
 * (docs/decisions.md §Engine's cached tokens).
 */
export class UsageCountScanner {
  /** The last value seen; -1 when none yet. */
  value = -1;
  #carry: Buffer | undefined;

  /** @param key the quoted field name to read, `"cached_tokens"` unless another usage count is wanted */
  constructor(private readonly key: Buffer = CACHED_TOKENS) {}

  push(chunk: Buffer): void {
    // A key or number cut between chunks: read across the seam first, then the chunk.
    if (this.#carry) this.#scan(Buffer.concat([this.#carry, chunk.subarray(0, Math.min(chunk.length, CARRY))]));
    this.#scan(chunk);
    this.#carry = chunk.length >= CARRY ? chunk.subarray(chunk.length - CARRY) : Buffer.from(chunk);
  }

  #scan(buf: Buffer): void {
    const key = this.key;
    for (let at = buf.indexOf(key); at >= 0; at = buf.indexOf(key, at + key.length)) {
      let i = at + key.length;
      while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x3a)) i++;
      let v = 0;
      let digits = 0;
      for (; i < buf.length && buf[i]! >= 0x30 && buf[i]! <= 0x39 && digits < 12; i++, digits++) v = v * 10 + (buf[i]! - 0x30);
      // A number cut by the chunk's end is read again, whole, from the carried tail.
      if (digits > 0 && i < buf.length) this.value = v;
    }
  }
}
