import { hashBucket as bucket } from '../prefix/index.js';
/**
 * The engine's KV memory as a pool of fixed-size blocks, with a prefix cache on top.
 *
 * A block is either free, reserved by a running request for tokens not yet hashed
 * ("anonymous"), or cached under its chained hash. Cached blocks carry a reference
 * count: referenced blocks are pinned; unreferenced ones stay cached but count as
 * free (both engines report them so) and are evicted least-recently-released first.
 */
/**
 * What the cache tells a KV-event publisher (docs/simulator.md §Push channels): blocks
 * it starts holding, in runs that chain from `parent`, and blocks it lets go.
 */
export interface KvCacheListener {
  /**
   * Blocks `first`..`first + hashes.length - 1` of a sequence became cached; `tokens()`
   * gives the whole sequence (at least up to the run's end), always: the events carry a
   * run's token ids, and an engine posing as SGLang hashes them. Made only when asked
   * for: a replayed trace's prompts have no token array until then (KeyedPrompt).
   */
  stored(hashes: readonly number[], parent: number | null, first: number, tokens: () => readonly number[]): void;
  removed(hashes: readonly number[]): void;
  cleared(): void;
}

/** What holds cached blocks: a running request, through the deepest run of its chain it pins (NONE: none). */
export interface KvHolder {
  kvNode: number;
}

export const NO_KV_NODE = -1;
const NONE = NO_KV_NODE;
const NO_KEYS: readonly number[] = [];

/**
 * The cached blocks as a radix tree of runs, as SGLang's radix cache holds them: a node
 * is a run of consecutive blocks of one chain that every holder pins all of or none of,
 * so one reference count, one place in the eviction order and one table entry serve the
 * whole run. A prompt of 765 blocks is then a handful of nodes, where a table entry per
 * block cost a probe and a cache miss each (BENCHMARKS.md, section 10).
 *
 * The cache behaves exactly as a pool of blocks each with its own count and its own
 * place in a least-recently-released order (test/sim/kv-block-cache.test.ts holds it to
 * that model, event for event), because of two facts about chained keys:
 * - whoever pins a block pins every block before it in its chain, so counts never rise
 *   along a chain, and a node splits where a holder's pin ends inside it;
 * - a holder releases its chain deepest first, so within a node the deeper blocks are
 *   always the less recent, a child always precedes its parent in the eviction order,
 *   and eviction takes the head node from its tail (a leaf: nothing below it is cached).
 *
 * A node's keys are read in place from the array they were committed from, indexed by
 * their place in the chain, so a node costs no copy. The table finds a node by the key
 * of its first block: a key fixes its whole chain, and so its place (chained hashes).
 */
export class KvBlockCache {
  readonly capacity: number;
  listener: KvCacheListener | undefined;
  private readonly mask: number;
  /** Two words a slot: the node (NONE when free), then its first key's bucket hash. */
  private readonly table: Int32Array;
  /** Nodes, a slab of `capacity` (each holds at least one block). */
  private readonly firstKey: Float64Array;
  private readonly keysOf: (readonly number[])[];
  /** Place in the chain of a node's first block, which is also where keysOf holds its key. */
  private readonly pos: Int32Array;
  private readonly len: Int32Array;
  private readonly parent: Int32Array;
  /** Holders pinning the node; 0 = evictable. */
  private readonly refs: Int32Array;
  private readonly slotOf: Int32Array;
  // The evictable nodes, oldest release first: a doubly linked list through the slab.
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private head = NONE;
  private tail = NONE;
  private evictableBlocks = 0;
  private readonly free: Int32Array;
  private freeTop: number;
  private size = 0;
  private anonymous = 0;
  private pinned = 0;
  evictions = 0;
  private path: Int32Array = new Int32Array(64);

  constructor(capacity: number) {
    this.capacity = capacity;
    let tableSize = 16;
    while (tableSize < capacity * 2) tableSize *= 2;
    this.mask = tableSize - 1;
    this.table = new Int32Array(2 * tableSize).fill(NONE);
    this.firstKey = new Float64Array(capacity);
    this.keysOf = new Array<readonly number[]>(capacity).fill(NO_KEYS);
    this.pos = new Int32Array(capacity);
    this.len = new Int32Array(capacity);
    this.parent = new Int32Array(capacity);
    this.refs = new Int32Array(capacity);
    this.slotOf = new Int32Array(capacity);
    this.prev = new Int32Array(capacity);
    this.next = new Int32Array(capacity);
    this.free = new Int32Array(capacity);
    // Nodes handed out from 0 upwards: the pool is popped from its top.
    for (let i = 0; i < capacity; i++) this.free[i] = capacity - 1 - i;
    this.freeTop = capacity;
  }

  /** Leading blocks of `hashes` (a chain) that are cached now, pinned or not. Read-only. */
  matchPrefix(hashes: readonly number[], limit = hashes.length): number {
    let n = 0;
    while (n < limit) {
      const node = this.find(hashes[n]!);
      if (node === NONE || this.pos[node] !== n) break;
      const keys = this.keysOf[node]!;
      const end = n + this.len[node]!;
      n++;
      while (n < limit && n < end && keys[n] === hashes[n]) n++;
      if (n < end) break;
    }
    return n;
  }

  /**
   * Pin the first `hits` blocks of `hashes` (cached: matchPrefix said so, nothing has
   * changed since) for `holder`, and reserve `reserve` anonymous blocks, evicting
   * unreferenced blocks as needed. All or nothing: false leaves the cache as it was (the
   * caller keeps the request waiting: head-of-line blocking).
   */
  admit(holder: KvHolder, hashes: readonly number[], hits: number, reserve: number): boolean {
    // Blocks we are about to pin cannot be evicted to make room for ourselves.
    let pinnedFromEvictable = 0;
    let depth = 0;
    for (let n = 0; n < hits;) {
      const node = this.find(hashes[n]!);
      if (depth === this.path.length) this.path = growInt32(this.path);
      this.path[depth++] = node;
      const end = Math.min(n + this.len[node]!, hits);
      if (this.refs[node] === 0) pinnedFromEvictable += end - n;
      n = end;
    }
    const freeNow = this.capacity - this.size - this.anonymous;
    if (freeNow + this.evictableBlocks - pinnedFromEvictable < reserve) return false;
    let deepest = NONE;
    for (let d = 0; d < depth; d++) {
      let node = this.path[d]!;
      if (d === depth - 1 && this.pos[node]! + this.len[node]! > hits) node = this.split(node, hits);
      this.pin(node);
      deepest = node;
    }
    holder.kvNode = deepest;
    this.evictFor(reserve);
    this.anonymous += reserve;
    return true;
  }

  /**
   * Turn anonymous blocks of `holder`, which pins hashes[0..from) already, into cached
   * blocks under hashes[from..to). Blocks another request cached meanwhile are shared,
   * and ours go back free. `tokens` is the sequence the hashes are of, or makes it (the
   * listener is told them).
   */
  commit(
    holder: KvHolder,
    hashes: readonly number[],
    from: number,
    to: number,
    tokens: readonly number[] | (() => readonly number[]),
  ): void {
    this.anonymous -= to - from;
    let cur = holder.kvNode;
    let i = from;
    while (i < to) {
      const node = this.find(hashes[i]!);
      if (node === NONE || this.pos[node] !== i) {
        cur = this.insert(hashes, i, to - i, cur);
        this.size += to - i;
        this.pinned += to - i;
        const listener = this.listener;
        if (listener) {
          const make = typeof tokens === 'function' ? tokens : () => tokens as readonly number[];
          listener.stored(hashes.slice(i, to), i > 0 ? hashes[i - 1]! : null, i, make);
        }
        break;
      }
      const keys = this.keysOf[node]!;
      const end = i + this.len[node]!;
      let q = i + 1;
      while (q < to && q < end && keys[q] === hashes[q]) q++;
      cur = q < end ? this.split(node, q) : node;
      this.pin(cur);
      i = q;
    }
    holder.kvNode = cur;
  }

  /**
   * Release everything `holder` pins and give back its `anonymous` blocks. Its chain goes
   * deepest first, so that each block is more recent than those after it and eviction
   * takes the chain from its tail: SGLang's radix cache evicts least-recent leaves, vLLM
   * frees a request's blocks in reverse order. Releasing root first would evict a prefix
   * before its suffix and strand the suffix, cached but unreachable.
   */
  releaseChain(holder: KvHolder, anonymous: number): void {
    for (let node = holder.kvNode; node !== NONE; node = this.parent[node]!) {
      if (--this.refs[node]! === 0) {
        this.pinned -= this.len[node]!;
        this.append(node);
      }
    }
    holder.kvNode = NONE;
    this.anonymous -= anonymous;
  }

  /** Forget every unreferenced block (SGLang's /flush_cache). */
  flush(): void {
    while (this.head !== NONE) {
      const node = this.head;
      this.size -= this.len[node]!;
      this.unlink(node);
      this.remove(node);
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

  private pin(node: number): void {
    const refs = this.refs[node]!;
    this.refs[node] = refs + 1;
    if (refs === 0) {
      this.pinned += this.len[node]!;
      this.unlink(node);
    }
  }

  /** A new node of `len` blocks of `keys` from place `at`, below `parent`, pinned once (so on no list). */
  private insert(keys: readonly number[], at: number, len: number, parent: number): number {
    const node = this.free[--this.freeTop]!;
    const h = keys[at]!;
    this.keysOf[node] = keys;
    this.firstKey[node] = h;
    this.pos[node] = at;
    this.len[node] = len;
    this.parent[node] = parent;
    this.refs[node] = 1;
    this.place(node, h);
    return node;
  }

  /**
   * Cut `node` at place `at` inside it; returns the new node for the blocks before `at`.
   * `node` keeps the blocks from `at` on, so whatever points at it (children, a holder's
   * deepest node, the eviction list) still does, and the head takes its place in the
   * table, in its parent's chain and, when evictable, just after it in release order.
   */
  private split(node: number, at: number): number {
    const headLen = at - this.pos[node]!;
    const head = this.free[--this.freeTop]!;
    this.keysOf[head] = this.keysOf[node]!;
    this.firstKey[head] = this.firstKey[node]!;
    this.pos[head] = this.pos[node]!;
    this.len[head] = headLen;
    this.parent[head] = this.parent[node]!;
    this.refs[head] = this.refs[node]!;
    const slot = this.slotOf[node]!;
    this.table[2 * slot] = head;
    this.slotOf[head] = slot;
    if (this.refs[node] === 0) {
      const n = this.next[node]!;
      this.prev[head] = node;
      this.next[head] = n;
      this.next[node] = head;
      if (n === NONE) this.tail = head;
      else this.prev[n] = head;
    }
    const h = this.keysOf[node]![at]!;
    this.firstKey[node] = h;
    this.pos[node] = at;
    this.len[node] = this.len[node]! - headLen;
    this.parent[node] = head;
    this.place(node, h);
    return head;
  }

  private evictFor(reserve: number): void {
    let free = this.capacity - this.size - this.anonymous;
    if (free >= reserve) return;
    const gone: number[] | undefined = this.listener ? [] : undefined;
    while (this.head !== NONE && free < reserve) {
      const node = this.head;
      const len = this.len[node]!;
      const take = Math.min(len, reserve - free);
      if (gone !== undefined) {
        const keys = this.keysOf[node]!;
        const last = this.pos[node]! + len - 1;
        for (let k = 0; k < take; k++) gone.push(keys[last - k]!);
      }
      this.size -= take;
      this.evictions += take;
      free += take;
      if (take === len) {
        this.unlink(node);
        this.remove(node);
      } else {
        // The head's deepest blocks are its least recent: the node stays, shorter, at the head.
        this.len[node] = len - take;
        this.evictableBlocks -= take;
      }
    }
    if (gone !== undefined && gone.length > 0) this.listener!.removed(gone);
  }

  private find(h: number): number {
    const tag = bucket(h) | 0;
    let i = tag & this.mask;
    for (;;) {
      const e = this.table[2 * i]!;
      if (e === NONE || (this.table[2 * i + 1] === tag && this.firstKey[e] === h)) return e;
      i = (i + 1) & this.mask;
    }
  }

  /** Enter `node` in the table under `h`, a key no node starts with. */
  private place(node: number, h: number): void {
    const tag = bucket(h) | 0;
    let slot = tag & this.mask;
    while (this.table[2 * slot] !== NONE) slot = (slot + 1) & this.mask;
    this.table[2 * slot] = node;
    this.table[2 * slot + 1] = tag;
    this.slotOf[node] = slot;
  }

  /** Delete `node` from the table (backward shift: no tombstones) and free it. */
  private remove(node: number): void {
    this.keysOf[node] = NO_KEYS;
    this.free[this.freeTop++] = node;
    this.closeHole(this.slotOf[node]!);
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

  /** Put `node` last on the evictable list (it was just released). */
  private append(node: number): void {
    this.prev[node] = this.tail;
    this.next[node] = NONE;
    if (this.tail === NONE) this.head = node;
    else this.next[this.tail] = node;
    this.tail = node;
    this.evictableBlocks += this.len[node]!;
  }

  private unlink(node: number): void {
    const p = this.prev[node]!;
    const n = this.next[node]!;
    if (p === NONE) this.head = n;
    else this.next[p] = n;
    if (n === NONE) this.tail = p;
    else this.prev[n] = p;
    this.evictableBlocks -= this.len[node]!;
  }
}

function growInt32(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
