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
  /** Blocks `first`..`first + hashes.length - 1` of a sequence became cached; `tokens` is the whole sequence when known. */
  stored(hashes: readonly number[], parent: number | null, first: number, tokens: readonly number[] | undefined): void;
  removed(hashes: readonly number[]): void;
  cleared(): void;
}

export class KvBlockCache {
  readonly capacity: number;
  listener: KvCacheListener | undefined;
  /** Cached blocks by hash, with the requests referencing each (a number, not an object: ~160 of these per prompt). */
  private readonly cached = new Map<number, number>();
  /** Unreferenced cached blocks in release order: the first key is the LRU victim. */
  private readonly evictable = new Set<number>();
  private anonymous = 0;
  private pinned = 0;
  evictions = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Leading blocks of `hashes` that are cached now (pinned or not). */
  matchPrefix(hashes: readonly number[], limit = hashes.length): number {
    let n = 0;
    while (n < limit && this.cached.has(hashes[n]!)) n++;
    return n;
  }

  /**
   * Pin the first `hits` blocks of `hashes` and reserve `reserve` anonymous blocks,
   * evicting unreferenced blocks as needed. All or nothing: false leaves the cache as
   * it was (the caller keeps the request waiting: head-of-line blocking).
   */
  admit(hashes: readonly number[], hits: number, reserve: number): boolean {
    // Blocks we are about to pin cannot be evicted to make room for ourselves.
    let pinnedFromEvictable = 0;
    for (let i = 0; i < hits; i++) {
      if (this.cached.get(hashes[i]!) === 0) pinnedFromEvictable++;
    }
    const freeNow = this.capacity - this.cached.size - this.anonymous;
    if (freeNow + this.evictable.size - pinnedFromEvictable < reserve) return false;
    for (let i = 0; i < hits; i++) this.ref(hashes[i]!);
    this.evictFor(reserve);
    this.anonymous += reserve;
    return true;
  }

  /**
   * Turn anonymous blocks of a request into cached blocks under `hashes[from..to)`.
   * A hash another request cached meanwhile is shared, and our block goes back free.
   */
  commit(hashes: readonly number[], from: number, to: number, tokens?: readonly number[]): void {
    let runStart = -1;
    for (let i = from; i < to; i++) {
      const h = hashes[i]!;
      this.anonymous--;
      if (this.cached.has(h)) {
        this.ref(h);
        if (runStart >= 0) this.#stored(hashes, runStart, i, tokens);
        runStart = -1;
      } else {
        this.cached.set(h, 1);
        this.pinned++;
        if (runStart < 0) runStart = i;
      }
    }
    if (runStart >= 0) this.#stored(hashes, runStart, to, tokens);
  }

  #stored(hashes: readonly number[], from: number, to: number, tokens: readonly number[] | undefined): void {
    this.listener?.stored(hashes.slice(from, to), from > 0 ? hashes[from - 1]! : null, from, tokens);
  }

  /** Drop a request's references to hashes[0..count) and give back its anonymous blocks. */
  release(hashes: readonly number[], count: number, anonymous: number): void {
    for (let i = 0; i < count; i++) {
      const h = hashes[i]!;
      const refs = this.cached.get(h);
      if (refs === undefined) continue;
      this.cached.set(h, refs - 1);
      if (refs === 1) {
        this.pinned--;
        this.evictable.add(h);
      }
    }
    this.anonymous -= anonymous;
  }

  /** Forget every unreferenced block (SGLang's /flush_cache). */
  flush(): void {
    for (const h of this.evictable) this.cached.delete(h);
    this.evictable.clear();
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
    return this.cached.size;
  }

  private ref(h: number): void {
    const refs = this.cached.get(h)!;
    this.cached.set(h, refs + 1);
    if (refs === 0) {
      this.pinned++;
      this.evictable.delete(h);
    }
  }

  private evictFor(reserve: number): void {
    let free = this.capacity - this.cached.size - this.anonymous;
    if (free >= reserve) return;
    const gone: number[] | undefined = this.listener ? [] : undefined;
    for (const h of this.evictable) {
      this.evictable.delete(h);
      this.cached.delete(h);
      this.evictions++;
      gone?.push(h);
      if (++free >= reserve) break;
    }
    if (gone !== undefined && gone.length > 0) this.listener!.removed(gone);
  }
}

