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
