import type { PolicyWorker, PrefixMatch } from '../../policies/index.js';

/**
 * Prefixes the router has just sent to a worker whose engine has not announced them
 * yet (docs/routing.md §The event gap). An engine publishes a prefix's `BlockStored`
 * when the prefill that computes it completes; until then an index built from events
 * does not know it, and a burst of requests sharing a new prompt is routed blind. Each
 * request sent under an events index is remembered here for `ttlMs`, and a lookup
 * credits its worker with the prefix the two requests share. The engine's events
 * confirm it (the index then holds as much, and the entry is dropped) or the entry
 * expires.
 *
 * Bounded: a ring of `capacity` entries, found through a map from a prompt's first
 * block key to at most PER_FIRST_KEY of them, newest last. Block keys are chained, so
 * two prompts that share key i share every key before it: the shared depth is found by
 * binary search, in O(log blocks) comparisons per entry. Nothing here scans the fleet.
 */
export class PredictedPrefixes<W extends PolicyWorker = PolicyWorker> {
  static readonly PER_FIRST_KEY = 8;
  readonly #ring: Array<Entry<W> | undefined>;
  #head = 0;
  readonly #byFirstKey = new Map<number, Array<Entry<W>>>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** Lookups a prediction deepened (a worker credited with more than the events index gave it). */
  used = 0;

  constructor(opts: { ttlMs: number; capacity: number; now: () => number }) {
    this.#ttlMs = opts.ttlMs;
    this.#now = opts.now;
    this.#ring = new Array<Entry<W> | undefined>(opts.capacity).fill(undefined);
  }

  /** Entries alive now (not expired, not confirmed). */
  get size(): number {
    const now = this.#now();
    let n = 0;
    for (const list of this.#byFirstKey.values()) for (const e of list) if (e.expiresAt > now) n++;
    return n;
  }

  /** `worker` was sent a request keyed `keys`: it will hold them once its engine has computed them. */
  record(keys: readonly number[], worker: W): void {
    if (keys.length === 0 || this.#ring.length === 0) return;
    const old = this.#ring[this.#head];
    if (old !== undefined) this.#drop(old);
    const entry: Entry<W> = { keys, worker, expiresAt: this.#now() + this.#ttlMs };
    this.#ring[this.#head] = entry;
    this.#head = (this.#head + 1) % this.#ring.length;
    const first = keys[0]!;
    const list = this.#byFirstKey.get(first);
    if (list === undefined) this.#byFirstKey.set(first, [entry]);
    else {
      // The same worker's older entry for a prefix this one extends (a conversation's next turn) adds nothing.
      const same = list.findIndex((e) => e.worker === worker && sharedDepth(e.keys, keys) === e.keys.length);
      if (same >= 0) list.splice(same, 1);
      list.push(entry);
      if (list.length > PredictedPrefixes.PER_FIRST_KEY) list.shift()!.expiresAt = -Infinity;
    }
  }

  /**
   * Deepen `matches` (the events index's answer for `keys`, one per worker) with what
   * was predicted: a worker predicted to hold more of the prefix than the index gives
   * it is credited with the prefix the two requests share. A prediction the index
   * already covers is confirmed, and dropped. `inPool` says who may be credited.
   */
  deepen(keys: readonly number[], matches: PrefixMatch[], inPool: (worker: PolicyWorker) => boolean): void {
    if (keys.length === 0) return;
    const list = this.#byFirstKey.get(keys[0]!);
    if (list === undefined) return;
    const now = this.#now();
    for (let i = list.length - 1; i >= 0; i--) {
      const e = list[i]!;
      let at = -1;
      for (let m = 0; m < matches.length; m++) if (matches[m]!.worker === e.worker) at = m;
      const known = at < 0 ? 0 : matches[at]!.blocks;
      if (e.expiresAt <= now || known >= e.keys.length) {
        this.#drop(e);
        continue;
      }
      const depth = sharedDepth(e.keys, keys);
      if (depth <= known || !inPool(e.worker)) continue;
      this.used++;
      if (at < 0) matches.push({ worker: e.worker, blocks: depth });
      else matches[at] = { worker: e.worker, blocks: depth };
    }
  }

  /** Forget everything predicted for a worker (it restarted, or left the fleet). */
  forgetWorker(worker: W): void {
    for (const list of [...this.#byFirstKey.values()]) for (const e of [...list]) if (e.worker === worker) this.#drop(e);
  }

  #drop(e: Entry<W>): void {
    e.expiresAt = -Infinity;
    const first = e.keys[0]!;
    const list = this.#byFirstKey.get(first);
    if (list === undefined) return;
    const at = list.indexOf(e);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.#byFirstKey.delete(first);
  }
}

interface Entry<W> {
  readonly keys: readonly number[];
  readonly worker: W;
  expiresAt: number;
}

/** Leading keys two chained key sequences share: keys agree up to some depth and differ from there on. */
export function sharedDepth(a: readonly number[], b: readonly number[]): number {
  let lo = 0;
  let hi = Math.min(a.length, b.length);
  // Invariant: a[0, lo) equals b[0, lo); a[hi] (if any) differs from b[hi].
  if (hi > 0 && a[hi - 1] === b[hi - 1]) return hi;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] === b[mid]) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
