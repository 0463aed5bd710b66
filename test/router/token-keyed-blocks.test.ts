import { describe, expect, it } from 'vitest';
import type { KvEvent } from '../../src/engines/index.js';
import { keyChainOf } from '../../src/prefix/index.js';
import { TokenKeyedBlocks } from '../../src/router/state/kv-index/token-keyed-blocks.js';

type Stored = Extract<KvEvent, { kind: 'stored' }>;
const BS = 4;
const tokens = (n: number, from = 0): number[] => Array.from({ length: n }, (_, i) => from + i);

/** A BlockStored run: engine hashes are arbitrary (the engine's own, uncomputable), two words each. */
function stored(hashes: number[], parent: number | null, ids: number[], more: Partial<Stored> = {}): Stored {
  const words = new Uint32Array(2 * hashes.length);
  hashes.forEach((h, i) => (words[2 * i + 1] = h));
  return {
    kind: 'stored',
    hashes: { count: hashes.length, words },
    parent: parent === null ? null : new Uint32Array([0, parent]),
    blockSize: BS,
    tokenCount: ids.length,
    tokens: new Uint32Array(ids),
    medium: 'GPU',
    cacheSalt: null,
    loraName: null,
    extraKeys: false,
    ...more,
  };
}

describe('TokenKeyedBlocks: engine blocks keyed by their tokens (docs/engine-push.md §Keying requests)', () => {
  it('a run stored in two events keys like the whole prompt from the root; removal finds each key by engine hash', () => {
    const b = new TokenKeyedBlocks(BS, 100);
    const t = tokens(5 * BS);
    const keys = new Float64Array(8);
    expect(b.store(stored([901, 902], null, t.slice(0, 2 * BS)), keys)).toEqual({ kind: 'keyed', count: 2 });
    const first = [...keys.slice(0, 2)];
    expect(b.store(stored([903, 904, 905], 902, t.slice(2 * BS)), keys)).toEqual({ kind: 'keyed', count: 3 });
    expect([...first, ...keys.slice(0, 3)]).toEqual(keyChainOf(t, BS));
    expect(b.take(0, 904)).toBe(keyChainOf(t, BS)[3]);
    expect(b.take(0, 904)).toBeUndefined();
    expect(b.size).toBe(4);
  });

  it.each([
    ['a parent never seen', stored([7], 999, tokens(BS)), 'unplaced'],
    ['a LoRA', stored([7], null, tokens(BS), { loraName: 'sql' }), 'unkeyed'],
    ['a cache salt', stored([7], null, tokens(BS), { cacheSalt: 'tenant' }), 'unkeyed'],
    ['images (extra keys)', stored([7], null, tokens(BS), { extraKeys: true }), 'unkeyed'],
    ['another block size', stored([7], null, tokens(8), { blockSize: 8 }), 'unkeyed'],
    ['fewer tokens than blocks', stored([7, 8], null, tokens(BS)), 'unkeyed'],
    ['no tokens', stored([7], null, [], { tokens: null }), 'unkeyed'],
  ] as Array<[string, Stored, string]>)('%s is not keyed (%s)', (_name, e, kind) => {
    const b = new TokenKeyedBlocks(BS, 100);
    expect(b.store(e, new Float64Array(4)).kind).toBe(kind);
    expect(b.size).toBe(0);
  });

  it('remembers at most maxBlocks engine hashes, forgetting the oldest; clear forgets all', () => {
    const b = new TokenKeyedBlocks(BS, 3);
    const keys = new Float64Array(8);
    b.store(stored([1, 2, 3, 4], null, tokens(4 * BS)), keys);
    expect(b.size).toBe(3);
    expect(b.take(0, 1)).toBeUndefined();
    expect(b.take(0, 4)).toBe(keys[3]);
    b.clear();
    expect(b.size).toBe(0);
  });
});
