import { fnv1a32, hashBucket as bucket } from '../../../prefix/index.js';

/**
 * Which worker was sent which prefix: chained block hash → up to K owner slots.
 *
 * Bounded memory by construction: a fixed-capacity open-addressing table (linear
 * probing, backward-shift deletion) in typed arrays, with CLOCK (second-chance)
 * eviction once full, so a million blocks cost a predictable few tens of MB and no
 * per-block objects for the GC. A block remembers at most `ownersPerBlock` workers,
 * most recent first, which also bounds a lookup to O(prompt blocks × K) whatever the
 * fleet size.
 *
 * Because a block's hash covers every block before it, a worker recorded under
 * block i was sent the whole prefix up to i; a lookup walks from block 0 and keeps
 * the workers that still hold each next block.
 */
export interface PrefixIndexOptions {
  maxBlocks: number;
  ownersPerBlock?: number;
}

const EMPTY = -1;

export class PrefixIndex {
  readonly capacity: number;
  readonly ownersPerBlock: number;

  /**
   * Hash table, two words a slot: the entry index (EMPTY when free), then its key's
   * bucket hash. A probe compares the bucket hash before it reads a key, and a deletion
   * finds each moved entry's home from it, so neither reads the keys, which on a
   * million-block index are a cache miss each (BENCHMARKS.md, section 10).
   */
  private readonly tableMask: number;
  private readonly table: Int32Array;
  // Entry slab.
  private readonly keys: Float64Array;
  private readonly tablePos: Int32Array;
  private readonly ownerCount: Uint8Array;
  private readonly owners: Int32Array;
  private readonly referenced: Uint8Array;
  private used = 0;
  private nextFresh = 0;
  private readonly free: number[] = [];
  private hand = 0;
  evictions = 0;
  /** touchSlots' sum of what it read, never used. */
  private touched = 0;
  // The digest: running sums over (block, owner) pairs, and owners' tags by slot.
  private readonly tags: number[] = [];
  private sumA = 0;
  private sumB = 0;
  private pairs = 0;

  // Lookup scratch, reused across requests.
  private stamp = new Int32Array(64);
  private stampGen = 0;
  private readonly survivors: Int32Array;
  private readonly scratch: Int32Array;

  constructor(opts: PrefixIndexOptions) {
    this.capacity = Math.max(1, Math.floor(opts.maxBlocks));
    this.ownersPerBlock = Math.max(1, Math.min(255, opts.ownersPerBlock ?? 8));
    let size = 16;
    while (size < this.capacity * 2) size *= 2; // load factor ≤ 0.5 keeps probes short
    this.tableMask = size - 1;
    this.table = new Int32Array(2 * size).fill(EMPTY);
    this.keys = new Float64Array(this.capacity);
    this.tablePos = new Int32Array(this.capacity);
    this.ownerCount = new Uint8Array(this.capacity);
    this.owners = new Int32Array(this.capacity * this.ownersPerBlock);
    this.referenced = new Uint8Array(this.capacity);
    this.survivors = new Int32Array(this.ownersPerBlock);
    this.scratch = new Int32Array(this.ownersPerBlock);
  }

  get size(): number {
    return this.used;
  }

  /** Approximate bytes held by the index's arrays (fixed at construction). */
  get bytes(): number {
    return (
      this.table.byteLength +
      this.keys.byteLength +
      this.tablePos.byteLength +
      this.ownerCount.byteLength +
      this.owners.byteLength +
      this.referenced.byteLength
    );
  }

  /**
   * Record that worker `slot` was sent the prefix `hashes` (leading `count` blocks).
   * `hints`, filled by an earlier `match` of the same hashes, say where each block was
   * then: a hint still naming its block saves the table probe, which on a long prompt
   * is a cache miss per block; a stale or absent hint just falls back to the lookup.
   * The hints end at the first EMPTY, where match stopped: what lies beyond is left
   * from an earlier prompt, and reading it would cost a miss per block for nothing.
   */
  record(slot: number, hashes: ArrayLike<number>, count = hashes.length, hints?: Int32Array): void {
    const K = this.ownersPerBlock;
    let prev = EMPTY;
    const hinted = hints === undefined ? 0 : hintedLength(hints, count);
    this.touchSlots(hashes, hinted, count);
    for (let i = 0; i < count; i++) {
      const h = hashes[i]!;
      const hint = i < hinted ? hints![i]! : EMPTY;
      let e = this.holds(hint, h) ? hint : this.holds(prev + 1, h) ? prev + 1 : this.probe(h);
      // Not held: the probe ended on the free slot it goes in, still free unless an eviction moves entries first.
      if (e < EMPTY) e = this.used < this.capacity ? this.insertAt(EMPTY - 1 - e, h) : this.insert(h);
      prev = e;
      this.referenced[e] = 1;
      // Move (or put) the owner to the front: most recent first; the oldest falls off.
      const base = e * K;
      const n = this.ownerCount[e]!;
      let at = -1;
      for (let j = 0; j < n; j++) {
        if (this.owners[base + j] === slot) {
          at = j;
          break;
        }
      }
      if (at === 0) continue;
      if (at === -1) {
        if (n === K) this.pairGone(e, this.owners[base + K - 1]!); // the oldest falls off
        this.pairCame(e, slot);
      }
      const last = at === -1 ? Math.min(n, K - 1) : at;
      for (let j = last; j > 0; j--) this.owners[base + j] = this.owners[base + j - 1]!;
      this.owners[base] = slot;
      if (at === -1 && n < K) this.ownerCount[e] = n + 1;
    }
  }

  /**
   * Leading blocks held per worker. Fills `out` (slot, depth) pairs for workers that
   * hold at least block 0, and returns how many. O(blocks walked × K); no allocation.
   * With `hints`, writes where each walked block sits, for a later `record`, and
   * EMPTY after the last (when there is room).
   */
  match(hashes: ArrayLike<number>, out: { slots: Int32Array; depths: Int32Array }, count = hashes.length, hints?: Int32Array): number {
    if (count === 0) return 0;
    const K = this.ownersPerBlock;
    const owners = this.owners;
    let e = this.find(hashes[0]!);
    if (hints !== undefined) hints[0] = e;
    if (e === EMPTY) return 0;
    const surv = this.survivors;
    let prevBase = e * K;
    let prevCount = this.ownerCount[e]!;
    for (let j = 0; j < prevCount; j++) surv[j] = owners[prevBase + j]!;
    let alive = prevCount;
    // Every survivor has held every block so far, so they share one depth.
    let reached = 1;
    let done = 0; // finished workers are compacted to the front of out
    let i = 1;
    for (; i < count && alive > 0; i++) {
      e = this.findAfter(e, hashes[i]!);
      if (e === EMPTY) break;
      if (hints !== undefined && i < hints.length) hints[i] = e;
      const base = e * K;
      const m = this.ownerCount[e]!;
      // A prefix recorded by the same workers in the same order has the same owner
      // list block after block: then every survivor is still there, and the common
      // case costs one comparison of at most K slots.
      if (m === prevCount && sameSlots(owners, base, prevBase, m)) {
        reached = i + 1;
        prevBase = base;
        continue;
      }
      const gen = this.nextGen();
      for (let j = 0; j < m; j++) this.mark(owners[base + j]!, gen);
      let w = 0;
      for (let j = 0; j < alive; j++) {
        const s = surv[j]!;
        if (this.stamp[s] === gen) surv[w++] = s;
        else {
          out.slots[done] = s;
          out.depths[done] = reached;
          done++;
        }
      }
      alive = w;
      if (alive > 0) reached = i + 1;
      prevBase = base;
      prevCount = m;
    }
    if (hints !== undefined && i < hints.length) hints[i] = EMPTY;
    for (let j = 0; j < alive; j++) {
      out.slots[done] = surv[j]!;
      out.depths[done] = reached;
      done++;
    }
    return done;
  }

  /**
   * The owner no longer holds block `h` (an engine evicted it): drop it from the
   * block's owners, and the block once nobody holds it. Unknown blocks are ignored.
   */
  removeOwner(slot: number, h: number): void {
    const e = this.find(h);
    if (e !== EMPTY) this.dropOwner(e, slot);
  }

  /**
   * Name an owner slot for the digest: a hash of something every replica names the
   * same way (its worker URL, and DP rank). Set it before the slot owns anything.
   */
  setOwnerTag(slot: number, name: string): void {
    while (this.tags.length <= slot) this.tags.push(0);
    this.tags[slot] = fnv1a32(name);
  }

  /**
   * A digest of what the index holds: every (block, owner) pair, whatever the order
   * they came in, the table layout or recency, so two indexes fed the same facts give
   * the same digest (owners named by setOwnerTag). Kept as two running sums of
   * per-pair hashes, updated as pairs come and go: reading it costs nothing.
   */
  digest(): { blocks: number; pairs: number; digest: string } {
    return {
      blocks: this.used,
      pairs: this.pairs,
      digest: (this.sumA >>> 0).toString(16).padStart(8, '0') + (this.sumB >>> 0).toString(16).padStart(8, '0'),
    };
  }

  /** Remove a worker from every block (it left the fleet). O(capacity); rare. */
  forgetWorker(slot: number): void {
    for (let e = 0; e < this.nextFresh; e++) if (this.ownerCount[e]! > 0) this.dropOwner(e, slot);
  }

  /** Take `slot` off entry e's owners (keeping their order), and the entry once nobody holds it. */
  private dropOwner(e: number, slot: number): void {
    const base = e * this.ownersPerBlock;
    const n = this.ownerCount[e]!;
    let w = 0;
    for (let j = 0; j < n; j++) {
      const s = this.owners[base + j]!;
      if (s !== slot) this.owners[base + w++] = s;
    }
    if (w === n) return;
    this.pairGone(e, slot);
    this.ownerCount[e] = w;
    if (w === 0) this.remove(e);
  }

  /** Blocks the index would need for a scratch buffer of owners (the lookup result size). */
  newMatchBuffer(): { slots: Int32Array; depths: Int32Array } {
    return { slots: new Int32Array(this.ownersPerBlock), depths: new Int32Array(this.ownersPerBlock) };
  }

  /** Whether entry e is live and holds block h. */
  private holds(e: number, h: number): boolean {
    return e >= 0 && e < this.capacity && this.keys[e] === h && this.tablePos[e] !== EMPTY;
  }

  /**
   * Find block h, the block after entry `prev` in some prompt. A prompt's blocks are
   * mostly inserted together, so they sit in consecutive entries: trying the next
   * entry first turns a table probe (a cache miss per block on a long prompt) into a
   * sequential read.
   */
  private findAfter(prev: number, h: number): number {
    return this.holds(prev + 1, h) ? prev + 1 : this.find(h);
  }

  /**
   * Read the home slot of blocks hashes[from..to) in one pass before record probes
   * them: these loads do not wait on each other, so their cache misses (a table of
   * millions of slots) overlap, where the record loop would meet them one at a time.
   * Reads only; the sum is kept so the loads are not dropped.
   */
  private touchSlots(hashes: ArrayLike<number>, from: number, to: number): void {
    const t = this.table;
    const mask = this.tableMask;
    let sum = 0;
    for (let i = from; i < to; i++) sum |= t[2 * (bucket(hashes[i]!) & mask)]!;
    this.touched = sum;
  }

  private find(h: number): number {
    const e = this.probe(h);
    return e < EMPTY ? EMPTY : e;
  }

  /** Entry of block h, or, when it is not held, EMPTY - 1 - the free slot its probe ended on. */
  private probe(h: number): number {
    const t = this.table;
    const tag = bucket(h) | 0;
    let i = tag & this.tableMask;
    for (;;) {
      const e = t[2 * i]!;
      if (e === EMPTY) return EMPTY - 1 - i;
      if (t[2 * i + 1] === tag && this.keys[e] === h) return e;
      i = (i + 1) & this.tableMask;
    }
  }

  private insert(h: number): number {
    if (this.used >= this.capacity) this.evictOne();
    // The eviction may have moved entries back into h's probe run: probe again.
    const at = this.probe(h);
    return this.insertAt(EMPTY - 1 - at, h);
  }

  /** A new entry for h in free slot `slot`: from the free list, else never used yet. */
  private insertAt(slot: number, h: number): number {
    const e = this.free.length > 0 ? this.free.pop()! : this.nextFresh++;
    this.keys[e] = h;
    this.ownerCount[e] = 0;
    this.table[2 * slot] = e;
    this.table[2 * slot + 1] = bucket(h) | 0;
    this.tablePos[e] = slot;
    this.used++;
    return e;
  }

  /** CLOCK: skip (and clear) recently referenced entries, evict the first that is not (its entry goes on the free list). */
  private evictOne(): void {
    for (;;) {
      const e = this.hand;
      this.hand = (this.hand + 1) % this.nextFresh;
      if (this.tablePos[e] === EMPTY) continue; // a freed entry
      if (this.referenced[e]) {
        this.referenced[e] = 0;
        continue;
      }
      const K = this.ownersPerBlock;
      for (let j = 0; j < this.ownerCount[e]!; j++) this.pairGone(e, this.owners[e * K + j]!);
      this.remove(e);
      this.evictions++;
      return;
    }
  }

  /** Delete entry e from the table with backward-shift, so no tombstones accumulate. */
  private remove(e: number): void {
    const i = this.tablePos[e]!;
    if (i === EMPTY) return;
    this.tablePos[e] = EMPTY;
    this.ownerCount[e] = 0;
    this.referenced[e] = 0;
    this.used--;
    this.free.push(e);
    this.closeHole(i);
  }

  /**
   * Free slot `hole` and move later entries of its probe run back into it, keeping
   * every entry reachable from its home slot (src/prefix/open-table.ts's closeHole, on
   * this table's two words a slot).
   */
  private closeHole(hole: number): void {
    const t = this.table;
    const mask = this.tableMask;
    let i = hole;
    t[2 * i] = EMPTY;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const f = t[2 * j]!;
      if (f === EMPTY) return;
      const home = t[2 * j + 1]! & mask;
      // Move f back into the hole if its home is not cyclically in (i, j].
      const inRange = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!inRange) {
        t[2 * i] = f;
        t[2 * i + 1] = t[2 * j + 1]!;
        this.tablePos[f] = i;
        t[2 * j] = EMPTY;
        i = j;
      }
    }
  }

  private pairCame(e: number, slot: number): void {
    this.sumA = (this.sumA + this.pairHashA(e, slot)) | 0;
    this.sumB = (this.sumB + this.pairHashB(e, slot)) | 0;
    this.pairs++;
  }

  private pairGone(e: number, slot: number): void {
    this.sumA = (this.sumA - this.pairHashA(e, slot)) | 0;
    this.sumB = (this.sumB - this.pairHashB(e, slot)) | 0;
    this.pairs--;
  }

  private pairHashA(e: number, slot: number): number {
    const h = this.keys[e]!;
    return mix((h >>> 0) ^ (this.tags[slot] ?? 0), Math.floor(h / 4294967296) >>> 0);
  }

  private pairHashB(e: number, slot: number): number {
    const h = this.keys[e]!;
    return mix((Math.floor(h / 4294967296) >>> 0) ^ Math.imul(this.tags[slot] ?? 0, 0x9e3779b1), (h >>> 0) ^ 0x5bd1e995);
  }

  private mark(slot: number, gen: number): void {
    if (slot >= this.stamp.length) {
      const grown = new Int32Array(Math.max(slot + 1, this.stamp.length * 2));
      grown.set(this.stamp);
      this.stamp = grown;
    }
    this.stamp[slot] = gen;
  }

  private nextGen(): number {
    if (++this.stampGen === 0x7fffffff) {
      this.stamp.fill(0);
      this.stampGen = 1;
    }
    return this.stampGen;
  }
}

/** Leading hints before the first EMPTY (where match stopped), at most `count`. */
function hintedLength(hints: Int32Array, count: number): number {
  const n = Math.min(count, hints.length);
  let i = 0;
  while (i < n && hints[i] !== EMPTY) i++;
  return i;
}

/** Whether owners[a..a+n) and owners[b..b+n) hold the same slots in the same order. */
function sameSlots(owners: Int32Array, a: number, b: number, n: number): boolean {
  for (let j = 0; j < n; j++) if (owners[a + j] !== owners[b + j]) return false;
  return true;
}

function mix(x: number, y: number): number {
  let h = Math.imul(x ^ 0x27d4eb2f, 0x85ebca6b) ^ y;
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
