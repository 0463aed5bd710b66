import { describe, expect, it } from 'vitest';
import { encodeMsgpack, MsgpackMap, MsgpackReader } from '../../src/msgpack/index.js';

/** Bytes Python's msgpack (use_bin_type=True) writes for the same values, checked by hand against the msgpack spec. */
describe('encodeMsgpack writes the forms Python msgpack picks', () => {
  it.each([
    ['positive fixint', 5, '05'],
    ['uint8', 200, 'ccc8'],
    ['uint16', 1000, 'cd03e8'],
    ['uint32', 100_000, 'ce000186a0'],
    ['uint64 above 2^63 (a vLLM int hash)', 15760518052499183552n, 'cfdab89baa7b5857c0'],
    ['negative fixint', -1, 'ff'],
    ['int8', -100, 'd09c'],
    ['int16', -1000, 'd1fc18'],
    ['int32', -100_000, 'd2fffe7960'],
    ['int64 (an SGLang hash)', -5_000_000_000_000_000_000n, 'd3ba9c6e7dbb0c0000'],
    ['float64', 1.5, 'cb3ff8000000000000'],
    ['nil', null, 'c0'],
    ['fixstr', 'GPU', 'a3475055'],
    ['str8', 'x'.repeat(40), 'd928' + '78'.repeat(40)],
    ['bin8', new Uint8Array([1, 2, 3]), 'c403010203'],
    ['fixarray', [1, 'a'], '9201a161'],
    ['array16', new Array(16).fill(0), 'dc0010' + '00'.repeat(16)],
    [
      'fixmap in insertion order',
      new MsgpackMap([
        ['b', 1],
        ['a', 2],
      ]),
      '82a16201a16102',
    ],
  ])('%s', (_name, value, hex) => {
    expect(encodeMsgpack(value).toString('hex')).toBe(hex);
  });

  it('the reader reads back every form, 64-bit values as exact words', () => {
    const words = new Uint32Array(2);
    const r = new MsgpackReader(encodeMsgpack([15760518052499183552n, -5_000_000_000_000_000_000n, -1, 7]));
    expect(r.arrayLength()).toBe(4);
    r.word64(words, 0);
    expect((BigInt(words[0]!) << 32n) | BigInt(words[1]!)).toBe(15760518052499183552n);
    r.word64(words, 0);
    expect((BigInt(words[0]!) << 32n) | BigInt(words[1]!)).toBe(BigInt.asUintN(64, -5_000_000_000_000_000_000n));
    r.word64(words, 0);
    expect([words[0], words[1]]).toEqual([0xffffffff, 0xffffffff]);
    expect(r.number()).toBe(7);
    expect(r.done).toBe(true);
  });
});
