import { hashBucket as bucket } from '../../../src/prefix/index.js';
import type { KvCacheListener } from '../../../src/sim/kv-block-cache.js';
/**
 * The simulator's KV cache as it was before it held runs (src/sim/kv-block-cache.ts):
 * every block its own table entry, reference count and place in release order. Kept
 * as the model the run-holding cache must match event for event
 * (test/sim/kv-block-cache.test.ts), being the plainer of the two.
 */
const NONE = -1;

/**
 * Cached blocks live in a fixed slab of `capacity` entries found through an
 * open-addressing table (linear probing, backward-shift deletion), and the
 * unreferenced ones on an intrusive list in release order: no Map of 52-bit keys (each
 * a heap number) and no per-block object, which on a replayed trace made the cache
 * most of the simulator's time and garbage (BENCHMARKS.md, section 10).
 */
export class PerBlockKvCache {
  readonly capacity: number;
  listener: KvCacheListener | undefined;
  private readonly mask: number;
  /**
   * Two words a slot: the entry (NONE when free), then its key's bucket hash. A probe
   * compares the bucket hash before it reads a key, and a deletion finds each moved
   * entry's home from it: both stay inside the table's cache lines, as the keys do not.
   */
  private readonly table: Int32Array;
  private readonly keys: Float64Array;
  /** Requests referencing each cached entry; 0 = evictable. */
  private readonly refs: Int32Array;
  private readonly slotOf: Int32Array;
  // The evictable entries, oldest release first: a doubly linked list through the slab.
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private head = NONE;
  private tail = NONE;
  private evictableCount = 0;
  private readonly free: Int32Array;
  private freeTop: number;
  private size = 0;
  private anonymous = 0;
  private pinned = 0;
  evictions = 0;
  /** Blocks that left the cache so far: entries found before the last one may have been reused. */
  private removals = 0;
  // The last matchPrefix that wrote entries: whose, how many, and when.
  private matched: Int32Array | undefined;
  private matchedCount = 0;
  private matchedAtRemoval = -1;
  private scratch = new Int32Array(64);

  constructor(capacity: number) {
    this.capacity = capacity;
    let tableSize = 16;
    while (tableSize < capacity * 2) tableSize *= 2;
    this.mask = tableSize - 1;
    this.table = new Int32Array(2 * tableSize).fill(NONE);
    this.keys = new Float64Array(capacity);
    this.refs = new Int32Array(capacity);
    this.slotOf = new Int32Array(capacity);
    this.prev = new Int32Array(capacity);
    this.next = new Int32Array(capacity);
    this.free = new Int32Array(capacity);
    // Entries handed out from 0 upwards: the pool is popped from its top.
    for (let i = 0; i < capacity; i++) this.free[i] = capacity - 1 - i;
    this.freeTop = capacity;
  }

  /**
   * Leading blocks of `hashes` that are cached now (pinned or not). With `entries`,
   * writes where each matched block sits, for an admit of the same request that
   * follows before any block leaves the cache (it then probes no block again).
   */
  matchPrefix(hashes: readonly number[], limit = hashes.length, entries?: Int32Array): number {
    let n = 0;
    if (entries === undefined) {
      while (n < limit && this.find(hashes[n]!) !== NONE) n++;
      return n;
    }
    for (; n < limit; n++) {
      const e = this.find(hashes[n]!);
      if (e === NONE) break;
      entries[n] = e;
    }
    this.matched = entries;
    this.matchedCount = n;
    this.matchedAtRemoval = this.removals;
    return n;
  }

  /**
   * Pin the first `hits` blocks of `hashes` and reserve `reserve` anonymous blocks,
   * evicting unreferenced blocks as needed. All or nothing: false leaves the cache as
   * it was (the caller keeps the request waiting: head-of-line blocking). With
   * `entries`, the request's own (matchPrefix, commit, releaseChain), where the pinned
   * blocks sit is written there.
   */
  admit(hashes: readonly number[], hits: number, reserve: number, entries?: Int32Array): boolean {
    const at = entries ?? this.scratchEntries(hits);
    // Entries the last matchPrefix found are still where it found them until a block leaves.
    const known = entries !== undefined && entries === this.matched && this.matchedAtRemoval === this.removals && hits <= this.matchedCount;
    // Blocks we are about to pin cannot be evicted to make room for ourselves.
    let pinnedFromEvictable = 0;
    for (let i = 0; i < hits; i++) {
      const e = known ? at[i]! : this.find(hashes[i]!);
      at[i] = e;
      if (e !== NONE && this.refs[e] === 0) pinnedFromEvictable++;
    }
    const freeNow = this.capacity - this.size - this.anonymous;
    if (freeNow + this.evictableCount - pinnedFromEvictable < reserve) return false;
    for (let i = 0; i < hits; i++) this.ref(at[i]!);
    this.evictFor(reserve);
    this.anonymous += reserve;
    return true;
  }

  /**
   * Turn anonymous blocks of a request into cached blocks under `hashes[from..to)`.
   * A hash another request cached meanwhile is shared, and our block goes back free.
   * `tokens` is the sequence the hashes are of, or makes it (the listener is told them).
   */
  commit(
    hashes: readonly number[],
    from: number,
    to: number,
    tokens: readonly number[] | (() => readonly number[]),
    entries?: Int32Array,
  ): void {
    if (typeof tokens !== 'function') {
      const given = tokens;
      tokens = () => given;
    } else if (this.listener) {
      // Made at most once, however many runs the commit tells the listener of.
      const make = tokens;
      let made: readonly number[] | undefined;
      tokens = () => (made ??= make());
    }
    let runStart = -1;
    for (let i = from; i < to; i++) {
      const h = hashes[i]!;
      this.anonymous--;
      // One probe finds the block or the free slot it goes in.
      const tag = bucket(h) | 0;
      let slot = tag & this.mask;
      let e: number;
      while ((e = this.table[2 * slot]!) !== NONE && (this.table[2 * slot + 1] !== tag || this.keys[e] !== h))
        slot = (slot + 1) & this.mask;
      if (e !== NONE) {
        this.ref(e);
        if (runStart >= 0) this.#stored(hashes, runStart, i, tokens);
        runStart = -1;
      } else {
        e = this.insertAt(slot, h, tag);
        this.refs[e] = 1;
        this.pinned++;
        if (runStart < 0) runStart = i;
      }
      if (entries !== undefined) entries[i] = e;
    }
    if (runStart >= 0) this.#stored(hashes, runStart, to, tokens);
  }

  #stored(hashes: readonly number[], from: number, to: number, tokens: () => readonly number[]): void {
    this.listener?.stored(hashes.slice(from, to), from > 0 ? hashes[from - 1]! : null, from, tokens);
  }

  /** Drop a request's references to hashes[0..count) and give back its anonymous blocks. */
  release(hashes: readonly number[], count: number, anonymous: number): void {
    for (let i = 0; i < count; i++) {
      const e = this.find(hashes[i]!);
      if (e === NONE) continue;
      const refs = --this.refs[e]!;
      if (refs === 0) {
        this.pinned--;
        this.append(e);
      }
    }
    this.anonymous -= anonymous;
  }

  /**
   * Release a request's chain of blocks, hashes[0..count), deepest first, so that each
   * block is more recent than those after it and eviction takes the chain from its tail:
   * SGLang's radix cache evicts least-recent leaves, vLLM frees a request's blocks in
   * reverse order. Releasing root first would evict a prefix before its suffix and strand
   * the suffix, cached but unreachable.
   */
  releaseChain(hashes: readonly number[], count: number, anonymous: number, entries?: Int32Array): void {
    for (let i = count - 1; i >= 0; i--) {
      // A pinned block cannot leave the cache, so where admit or commit put it, it is.
      const e = entries !== undefined ? entries[i]! : this.find(hashes[i]!);
      if (e === NONE) continue;
      const refs = --this.refs[e]!;
      if (refs === 0) {
        this.pinned--;
        this.append(e);
      }
    }
    this.anonymous -= anonymous;
  }

  /** Forget every unreferenced block (SGLang's /flush_cache). */
  flush(): void {
    while (this.head !== NONE) {
      const e = this.head;
      this.unlink(e);
      this.remove(e);
    }
    this.listener?.cleared();
  }

  /** Blocks in use by requests: pinned cached blocks plus reservations. */
  usedBlocks(): number {
    return this.pinned + this.anonymous;
  }

  /** Cached blocks some request references (shared ones once). */
  pinnedBlocks(): number {
    return this.pinned;
  }

  cachedBlocks(): number {
    return this.size;
  }

  private ref(e: number): void {
    const refs = this.refs[e]!;
    this.refs[e] = refs + 1;
    if (refs === 0) {
      this.pinned++;
      this.unlink(e);
    }
  }

  private evictFor(reserve: number): void {
    let free = this.capacity - this.size - this.anonymous;
    if (free >= reserve) return;
    const gone: number[] | undefined = this.listener ? [] : undefined;
    while (this.head !== NONE) {
      const e = this.head;
      gone?.push(this.keys[e]!);
      this.unlink(e);
      this.remove(e);
      this.evictions++;
      if (++free >= reserve) break;
    }
    if (gone !== undefined && gone.length > 0) this.listener!.removed(gone);
  }

  private find(h: number): number {
    const tag = bucket(h) | 0;
    let i = tag & this.mask;
    for (;;) {
      const e = this.table[2 * i]!;
      if (e === NONE || (this.table[2 * i + 1] === tag && this.keys[e] === h)) return e;
      i = (i + 1) & this.mask;
    }
  }

  /** A new entry for h (not cached), in `slot`, the free slot its probe ended on: the caller sets its references. */
  private insertAt(slot: number, h: number, tag: number): number {
    const e = this.free[--this.freeTop]!;
    this.keys[e] = h;
    this.refs[e] = 0;
    this.table[2 * slot] = e;
    this.table[2 * slot + 1] = tag;
    this.slotOf[e] = slot;
    this.size++;
    return e;
  }

  /** Where admit without a request's own entries keeps them meanwhile. */
  private scratchEntries(n: number): Int32Array {
    if (this.scratch.length < n) this.scratch = new Int32Array(Math.max(n, this.scratch.length * 2));
    return this.scratch;
  }

  /** Delete entry e from the table (backward shift: no tombstones) and free it. */
  private remove(e: number): void {
    this.removals++;
    this.free[this.freeTop++] = e;
    this.size--;
    this.closeHole(this.slotOf[e]!);
  }

  /**
   * Free slot `hole` and move later entries of its probe run back into it, keeping
   * every entry reachable from its home slot (src/prefix/open-table.ts's closeHole, on
   * this table's two words a slot).
   */
  private closeHole(hole: number): void {
    const t = this.table;
    const mask = this.mask;
    let i = hole;
    t[2 * i] = NONE;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const f = t[2 * j]!;
      if (f === NONE) return;
      const home = t[2 * j + 1]! & mask;
      // Move f back into the hole if its home is not cyclically in (i, j].
      const inRange = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!inRange) {
        t[2 * i] = f;
        t[2 * i + 1] = t[2 * j + 1]!;
        this.slotOf[f] = i;
        t[2 * j] = NONE;
        i = j;
      }
    }
  }

  /** Put e last on the evictable list (it was just released). */
  private append(e: number): void {
    this.prev[e] = this.tail;
    this.next[e] = NONE;
    if (this.tail === NONE) this.head = e;
    else this.next[this.tail] = e;
    this.tail = e;
    this.evictableCount++;
  }

  private unlink(e: number): void {
    const p = this.prev[e]!;
    const n = this.next[e]!;
    if (p === NONE) this.head = n;
    else this.next[p] = n;
    if (n === NONE) this.tail = p;
    else this.prev[n] = p;
    this.evictableCount--;
  }
}
