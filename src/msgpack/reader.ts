/**
 * A msgpack reader that walks a payload in place: the push decoders read the fields
 * they need and skip the rest, so a BlockStored's token ids (thousands per event,
 * bigram pairs under EAGLE) are stepped over, never built into arrays, and a 64-bit
 * hash lands in two 32-bit words with no BigInt and no precision lost
 * (docs/engine-push.md §Decoding). Every read is bounds-checked: a truncated or hostile
 * payload throws MsgpackError, never reads past the buffer, and nesting is bounded.
 */

export class MsgpackError extends Error {
  override readonly name = 'MsgpackError';
}

/** Deepest nesting `skip` follows; the engines' payloads nest four levels. */
const MAX_DEPTH = 32;

/** Bytes after the type byte of an integer, by type byte; 255: not an integer. */
const INT_SIZE = (() => {
  const t = new Uint8Array(256).fill(255);
  for (let b = 0x00; b <= 0x7f; b++) t[b] = 0;
  for (let b = 0xe0; b <= 0xff; b++) t[b] = 0;
  t[0xcc] = t[0xd0] = 1;
  t[0xcd] = t[0xd1] = 2;
  t[0xce] = t[0xd2] = 4;
  t[0xcf] = t[0xd3] = 8;
  return t;
})();

export type MsgpackKind = 'nil' | 'bool' | 'int' | 'float' | 'str' | 'bin' | 'array' | 'map' | 'ext';

export class MsgpackReader {
  pos = 0;
  readonly #view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  /** The kind of the next value, without consuming it. */
  peek(): MsgpackKind {
    const b = this.#byte(this.pos);
    if (b <= 0x7f || b >= 0xe0) return 'int';
    if (b <= 0x8f) return 'map';
    if (b <= 0x9f) return 'array';
    if (b <= 0xbf) return 'str';
    switch (b) {
      case 0xc0:
        return 'nil';
      case 0xc2:
      case 0xc3:
        return 'bool';
      case 0xc4:
      case 0xc5:
      case 0xc6:
        return 'bin';
      case 0xc7:
      case 0xc8:
      case 0xc9:
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        return 'ext';
      case 0xca:
      case 0xcb:
        return 'float';
      case 0xcc:
      case 0xcd:
      case 0xce:
      case 0xcf:
      case 0xd0:
      case 0xd1:
      case 0xd2:
      case 0xd3:
        return 'int';
      case 0xd9:
      case 0xda:
      case 0xdb:
        return 'str';
      case 0xdc:
      case 0xdd:
        return 'array';
      case 0xde:
      case 0xdf:
        return 'map';
      default:
        throw new MsgpackError(`byte 0x${b.toString(16)} at ${this.pos} starts no msgpack value`);
    }
  }

  /** The next value's first byte, without consuming it. */
  typeByte(): number {
    return this.#byte(this.pos);
  }

  /** Consume a nil if one is next. */
  nil(): boolean {
    if (this.#byte(this.pos) !== 0xc0) return false;
    this.pos++;
    return true;
  }

  arrayLength(): number {
    const b = this.#take(1);
    if (b >= 0x90 && b <= 0x9f) return b & 0x0f;
    if (b === 0xdc) return this.#uint(2);
    if (b === 0xdd) return this.#uint(4);
    throw new MsgpackError(`expected an array at ${this.pos - 1}`);
  }

  mapLength(): number {
    const b = this.#take(1);
    if (b >= 0x80 && b <= 0x8f) return b & 0x0f;
    if (b === 0xde) return this.#uint(2);
    if (b === 0xdf) return this.#uint(4);
    throw new MsgpackError(`expected a map at ${this.pos - 1}`);
  }

  str(maxBytes = 65_536): string {
    const b = this.#take(1);
    let n: number;
    if (b >= 0xa0 && b <= 0xbf) n = b & 0x1f;
    else if (b === 0xd9) n = this.#uint(1);
    else if (b === 0xda) n = this.#uint(2);
    else if (b === 0xdb) n = this.#uint(4);
    else throw new MsgpackError(`expected a string at ${this.pos - 1}`);
    if (n > maxBytes) throw new MsgpackError(`string of ${n} bytes at ${this.pos} is over ${maxBytes}`);
    const start = this.#advance(n);
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + start, n).toString('utf8');
  }

  /** A bin's bytes (a view into the payload, not a copy). */
  bin(): Uint8Array {
    const b = this.#take(1);
    let n: number;
    if (b === 0xc4) n = this.#uint(1);
    else if (b === 0xc5) n = this.#uint(2);
    else if (b === 0xc6) n = this.#uint(4);
    else throw new MsgpackError(`expected bin at ${this.pos - 1}`);
    const start = this.#advance(n);
    return this.bytes.subarray(start, start + n);
  }

  /** An integer or a float as a JS number (integers beyond 2^53 lose precision: use word64 for hashes). */
  number(): number {
    const at = this.pos;
    const b = this.#take(1);
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 0x100;
    const v = this.#view;
    switch (b) {
      case 0xcc:
        return this.#uint(1);
      case 0xcd:
        return this.#uint(2);
      case 0xce:
        return this.#uint(4);
      case 0xcf: {
        const s = this.#advance(8);
        return v.getUint32(s) * 0x1_0000_0000 + v.getUint32(s + 4);
      }
      case 0xd0:
        return v.getInt8(this.#advance(1));
      case 0xd1:
        return v.getInt16(this.#advance(2));
      case 0xd2:
        return v.getInt32(this.#advance(4));
      case 0xd3: {
        const s = this.#advance(8);
        return v.getInt32(s) * 0x1_0000_0000 + v.getUint32(s + 4);
      }
      case 0xca:
        return v.getFloat32(this.#advance(4));
      case 0xcb:
        return v.getFloat64(this.#advance(8));
      default:
        this.pos = at;
        throw new MsgpackError(`expected a number at ${at}`);
    }
  }

  /**
   * A 64-bit hash as its two's-complement bit pattern, written to out[at] (high word)
   * and out[at + 1] (low word): signed i64 (SGLang), unsigned u64 (vLLM's int mode, values
   * above 2^63 included) and any shorter integer form alike; a bin (vLLM's bytes mode,
   * 32 bytes of SHA-256) is folded to its last 8 bytes read big-endian, as the other
   * consumers of that format do.
   */
  word64(out: Uint32Array, at: number): void {
    const start = this.pos;
    const b = this.#take(1);
    const v = this.#view;
    if (b === 0xcf || b === 0xd3) {
      // The common case, first: a full 64-bit integer.
      const s = this.#advance(8);
      out[at] = v.getUint32(s);
      out[at + 1] = v.getUint32(s + 4);
      return;
    }
    let hi: number;
    let lo: number;
    if (b <= 0x7f) {
      hi = 0;
      lo = b;
    } else if (b >= 0xe0) {
      hi = 0xffffffff;
      lo = (b - 0x100) >>> 0;
    } else {
      switch (b) {
        case 0xcc:
        case 0xcd:
        case 0xce:
          this.pos = start;
          hi = 0;
          lo = this.number();
          break;
        case 0xd0:
        case 0xd1:
        case 0xd2: {
          this.pos = start;
          const n = this.number();
          hi = n < 0 ? 0xffffffff : 0;
          lo = n >>> 0;
          break;
        }
        case 0xcf:
        case 0xd3: {
          const s = this.#advance(8);
          hi = v.getUint32(s);
          lo = v.getUint32(s + 4);
          break;
        }
        case 0xc4:
        case 0xc5:
        case 0xc6: {
          this.pos = start;
          const bytes = this.bin();
          if (bytes.length < 8) throw new MsgpackError(`a ${bytes.length}-byte hash at ${start} is shorter than 8 bytes`);
          const bv = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 8, 8);
          hi = bv.getUint32(0);
          lo = bv.getUint32(4);
          break;
        }
        default:
          this.pos = start;
          throw new MsgpackError(`expected a hash (integer or bytes) at ${start}`);
      }
    }
    out[at] = hi >>> 0;
    out[at + 1] = lo >>> 0;
  }

  /**
   * Step over `n` values that are expected to be integers (token ids) with one
   * table lookup each; anything else among them is stepped over the general way.
   */
  skipIntegers(n: number): void {
    const b = this.bytes;
    const len = b.length;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      if (pos >= len) throw new MsgpackError(`payload ends at ${pos}, inside a value`);
      const size = INT_SIZE[b[pos]!]!;
      if (size === 255) {
        this.pos = pos;
        this.skip();
        pos = this.pos;
        continue;
      }
      pos += 1 + size;
    }
    if (pos > len) throw new MsgpackError(`a value runs ${pos - len} bytes past the payload`);
    this.pos = pos;
  }

  /**
   * Read `n` unsigned integers below 2^32 into `out` (token ids): positive fixints and
   * uint 8/16/32 read inline. Returns the index of the first value that is not one
   * (the reader then stands on it), or `n` when all were.
   */
  uint32s(n: number, out: Uint32Array): number {
    const b = this.bytes;
    const len = b.length;
    let pos = this.pos;
    let i = 0;
    for (; i < n; i++) {
      if (pos >= len) break;
      const t = b[pos]!;
      if (t < 0x80) {
        out[i] = t;
        pos += 1;
      } else if (t === 0xcc && pos + 1 < len) {
        out[i] = b[pos + 1]!;
        pos += 2;
      } else if (t === 0xcd && pos + 2 < len) {
        out[i] = (b[pos + 1]! << 8) | b[pos + 2]!;
        pos += 3;
      } else if (t === 0xce && pos + 4 < len) {
        out[i] = ((b[pos + 1]! << 24) | (b[pos + 2]! << 16) | (b[pos + 3]! << 8) | b[pos + 4]!) >>> 0;
        pos += 5;
      } else break;
    }
    this.pos = pos;
    return i;
  }

  /** Step over the next value whatever it is (bounded nesting). */
  skip(depth = 0): void {
    if (depth > MAX_DEPTH) throw new MsgpackError(`nesting deeper than ${MAX_DEPTH} at ${this.pos}`);
    const b = this.#byte(this.pos);
    switch (this.peek()) {
      case 'nil':
      case 'bool':
        this.pos++;
        return;
      case 'int':
      case 'float':
        this.number();
        return;
      case 'str':
        this.str(Number.MAX_SAFE_INTEGER);
        return;
      case 'bin':
        this.bin();
        return;
      case 'array': {
        const n = this.arrayLength();
        for (let i = 0; i < n; i++) this.skip(depth + 1);
        return;
      }
      case 'map': {
        const n = this.mapLength();
        for (let i = 0; i < 2 * n; i++) this.skip(depth + 1);
        return;
      }
      case 'ext': {
        this.pos++;
        const fixed: Record<number, number> = { 0xd4: 1, 0xd5: 2, 0xd6: 4, 0xd7: 8, 0xd8: 16 };
        const size = fixed[b] ?? this.#uint(b === 0xc7 ? 1 : b === 0xc8 ? 2 : 4);
        this.#advance(size + 1); // type byte + data
        return;
      }
    }
  }

  #byte(at: number): number {
    if (at >= this.bytes.length) throw new MsgpackError(`payload ends at ${at}, inside a value`);
    return this.bytes[at]!;
  }

  #take(n: 1): number {
    const b = this.#byte(this.pos);
    this.pos += n;
    return b;
  }

  /** Claim n bytes; returns where they start. */
  #advance(n: number): number {
    const start = this.pos;
    if (n < 0 || start + n > this.bytes.length)
      throw new MsgpackError(`a value at ${start} runs ${start + n - this.bytes.length} bytes past the payload`);
    this.pos = start + n;
    return start;
  }

  #uint(n: 1 | 2 | 4): number {
    const s = this.#advance(n);
    const v = this.#view;
    return n === 1 ? v.getUint8(s) : n === 2 ? v.getUint16(s) : v.getUint32(s);
  }
}
