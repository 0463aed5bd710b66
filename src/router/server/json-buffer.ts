/**
 * A document written piece by piece into one growing buffer: at a few megabytes, a
 * string assembled from thousands of pieces cost more to flatten and encode on the way
 * to the socket than to build. Pieces already encoded (cached fragments) are copied as
 * they are.
 */
export class JsonBuffer {
  #buf: Buffer;
  #at = 0;

  constructor(sizeHint: number) {
    this.#buf = Buffer.allocUnsafe(Math.max(1024, sizeHint));
  }

  text(s: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.reserve(s.length * 3);
    this.#at += this.#buf.write(s, this.#at);
  }

  /** One ASCII character, by its code. */
  byte(c: number): void {
    this.reserve(1);
    this.#buf[this.#at++] = c;
  }

  /**
   * A number as JSON writes it. Whole non-negative ones (ages, counts) are written digit
   * by digit: a native string write per worker cost more than the rest of its entry.
   */
  number(n: number | null): void {
    if (n === null || !Number.isFinite(n)) return this.text('null');
    if (!Number.isSafeInteger(n) || n < 0) return this.text(String(n));
    this.reserve(16);
    const start = this.#at;
    let v = n;
    do {
      this.#buf[this.#at++] = 48 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
    this.#buf.subarray(start, this.#at).reverse();
  }

  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.#buf.set(b, this.#at);
    this.#at += b.length;
  }

  /** What was written; the buffer is not written to again. */
  done(): Buffer {
    return this.#buf.subarray(0, this.#at);
  }

  private reserve(n: number): void {
    if (this.#at + n <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#at + n));
    this.#buf.copy(grown, 0, 0, this.#at);
    this.#buf = grown;
  }
}
