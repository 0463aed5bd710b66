/**
 * A msgpack writer that picks the byte forms Python's msgpack does (smallest integer
 * form, float64 for floats, str/bin types kept apart), so what the simulator publishes
 * is byte for byte what SGLang and vLLM publish for the same values
 * (docs/engine-push.md §Framing). Values: null, booleans, numbers (integers as
 * integers), bigint (64-bit, signed or unsigned), strings, Uint8Array (bin), arrays,
 * and `MsgpackMap` for maps whose key order matters.
 */
export type MsgpackValue = null | boolean | number | bigint | string | Uint8Array | readonly MsgpackValue[] | MsgpackMap;

/** A map in the order its entries are written (Python dicts keep insertion order). */
export class MsgpackMap {
  constructor(readonly entries: ReadonlyArray<readonly [string, MsgpackValue]>) {}
}

export function encodeMsgpack(value: MsgpackValue): Buffer {
  const out: number[] = [];
  write(out, value);
  return Buffer.from(out);
}

function write(out: number[], v: MsgpackValue): void {
  if (v === null) out.push(0xc0);
  else if (typeof v === 'boolean') out.push(v ? 0xc3 : 0xc2);
  else if (typeof v === 'number') {
    if (Number.isInteger(v) && Number.isSafeInteger(v)) writeInt(out, BigInt(v));
    else {
      out.push(0xcb);
      const b = Buffer.alloc(8);
      b.writeDoubleBE(v);
      out.push(...b);
    }
  } else if (typeof v === 'bigint') writeInt(out, v);
  else if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    const n = b.length;
    if (n <= 31) out.push(0xa0 | n);
    else if (n <= 0xff) out.push(0xd9, n);
    else if (n <= 0xffff) out.push(0xda, n >> 8, n & 0xff);
    else out.push(0xdb, ...u32(n));
    out.push(...b);
  } else if (v instanceof Uint8Array) {
    const n = v.length;
    if (n <= 0xff) out.push(0xc4, n);
    else if (n <= 0xffff) out.push(0xc5, n >> 8, n & 0xff);
    else out.push(0xc6, ...u32(n));
    out.push(...v);
  } else if (v instanceof MsgpackMap) {
    header(out, v.entries.length, 0x80, 0xde, 0xdf);
    for (const [k, x] of v.entries) {
      write(out, k);
      write(out, x);
    }
  } else {
    header(out, v.length, 0x90, 0xdc, 0xdd);
    for (const x of v) write(out, x);
  }
}

function header(out: number[], n: number, fix: number, h16: number, h32: number): void {
  if (n <= 15) out.push(fix | n);
  else if (n <= 0xffff) out.push(h16, n >> 8, n & 0xff);
  else out.push(h32, ...u32(n));
}

function writeInt(out: number[], v: bigint): void {
  if (v >= 0n) {
    if (v <= 0x7fn) out.push(Number(v));
    else if (v <= 0xffn) out.push(0xcc, Number(v));
    else if (v <= 0xffffn) out.push(0xcd, Number(v >> 8n), Number(v & 0xffn));
    else if (v <= 0xffffffffn) out.push(0xce, ...u32(Number(v)));
    else if (v <= 0xffffffffffffffffn) out.push(0xcf, ...u64(v));
    else throw new RangeError(`${v} does not fit in 64 bits`);
  } else {
    if (v >= -32n) out.push(Number(v) & 0xff);
    else if (v >= -0x80n) out.push(0xd0, Number(v) & 0xff);
    else if (v >= -0x8000n) out.push(0xd1, (Number(v) >> 8) & 0xff, Number(v) & 0xff);
    else if (v >= -0x80000000n) out.push(0xd2, ...u32(Number(v) >>> 0));
    else if (v >= -0x8000000000000000n) out.push(0xd3, ...u64(BigInt.asUintN(64, v)));
    else throw new RangeError(`${v} does not fit in 64 bits`);
  }
}

function u32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

function u64(v: bigint): number[] {
  return [...u32(Number(v >> 32n)), ...u32(Number(v & 0xffffffffn))];
}
