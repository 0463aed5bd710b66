import { foldHash, KEY_CHAIN_ROOT, keyChain } from '../../../prefix/index.js';
import type { KvEvent } from '../../../engines/index.js';

type Stored = Extract<KvEvent, { kind: 'stored' }>;

/** What became of one BlockStored event's blocks. */
export type StoredVerdict =
  | { readonly kind: 'keyed'; readonly count: number }
  /** The parent block was never seen (stored before the router subscribed, or forgotten): the run cannot be keyed. */
  | { readonly kind: 'unplaced'; readonly count: number }
  /** The blocks are not plain token blocks of the router's size (a LoRA, images, a salt, another block size). */
  | { readonly kind: 'unkeyed'; readonly count: number };

/**
 * One publisher's blocks keyed by their tokens (docs/engine-push.md §Keying requests),
 * for engines whose block hashes the router cannot compute: a BlockStored run is keyed
 * with keyChain from the key its parent got, and each engine hash is remembered with
 * its key so that BlockRemoved, which names only engine hashes, can be applied.
 *
 * Memory is bounded: past `maxBlocks` remembered hashes the oldest is forgotten (a
 * later removal of it is then not applied; the prefix index's own LRU ages the block
 * out instead).
 */
export class TokenKeyedBlocks {
  /** Folded engine hash → router key; insertion order is age. */
  readonly #keyOf = new Map<number, number>();
  readonly #maxBlocks: number;
  readonly #blockSize: number;

  constructor(blockSize: number, maxBlocks: number) {
    this.#blockSize = blockSize;
    this.#maxBlocks = maxBlocks;
  }

  get size(): number {
    return this.#keyOf.size;
  }

  /** Key a stored run into `keys[0…count)`. */
  store(e: Stored, keys: Float64Array): StoredVerdict {
    const n = e.hashes.count;
    const bs = this.#blockSize;
    if (
      e.loraName !== null ||
      e.cacheSalt !== null ||
      e.extraKeys ||
      (e.blockSize !== null && e.blockSize !== bs) ||
      e.tokens === null ||
      e.tokens.length !== n * bs
    ) {
      return { kind: 'unkeyed', count: n };
    }
    let parent = KEY_CHAIN_ROOT;
    if (e.parent !== null) {
      const known = this.#keyOf.get(foldHash(e.parent[0]!, e.parent[1]!));
      if (known === undefined) return { kind: 'unplaced', count: n };
      parent = known;
    }
    keyChain(parent, e.tokens, 0, n, bs, keys);
    const w = e.hashes.words;
    for (let i = 0; i < n; i++) this.#remember(foldHash(w[2 * i]!, w[2 * i + 1]!), keys[i]!);
    return { kind: 'keyed', count: n };
  }

  /** The router key of a removed engine block, forgotten as it is returned; undefined when never keyed. */
  take(hi: number, lo: number): number | undefined {
    const h = foldHash(hi, lo);
    const key = this.#keyOf.get(h);
    if (key !== undefined) this.#keyOf.delete(h);
    return key;
  }

  clear(): void {
    this.#keyOf.clear();
  }

  #remember(hash: number, key: number): void {
    // Re-stored: move to the young end.
    if (this.#keyOf.delete(hash) === false && this.#keyOf.size >= this.#maxBlocks) {
      this.#keyOf.delete(this.#keyOf.keys().next().value as number);
    }
    this.#keyOf.set(hash, key);
  }
}
