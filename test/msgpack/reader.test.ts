import { describe, expect, it } from 'vitest';
import { encodeMsgpack, MsgpackReader } from '../../src/msgpack/index.js';

describe('MsgpackReader.uint32s reads token ids in place', () => {
  it.each([
    ['every unsigned width up to 2^32 - 1', [0, 127, 128, 255, 256, 65_535, 65_536, 0xffff_ffff], 8],
    ['stops at a negative number', [1, 2, -1, 4], 2],
    ['stops above 2^32', [1, 2 ** 32], 1],
    ['stops at a nested array', [1, [2, 3], 4], 1],
    ['stops at a string', ['a'], 0],
  ])('%s', (_name, values, readable) => {
    const r = new MsgpackReader(encodeMsgpack(values as never));
    const n = r.arrayLength();
    const out = new Uint32Array(n);
    expect(r.uint32s(n, out)).toBe(readable);
    expect([...out.slice(0, readable)]).toEqual((values as number[]).slice(0, readable));
    // The reader stands on the first value it did not read.
    if (readable < n) expect(r.peek()).not.toBe('nil');
    else expect(r.done).toBe(true);
  });

  it('a payload cut inside a value stops before it', () => {
    const bytes = encodeMsgpack([1, 70_000]);
    const r = new MsgpackReader(bytes.subarray(0, bytes.length - 1));
    const n = r.arrayLength();
    expect(r.uint32s(n, new Uint32Array(n))).toBe(1);
  });
});
