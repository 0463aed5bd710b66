import { PrefixChainKeys, cachedTokensOf, deepestKnown } from './prefix-chain.js';
import type { CacheCountOptions } from './prefix-chain.js';
import type { TraceRequest } from './mooncake-trace.js';

export interface SharedLruOptions extends CacheCountOptions {
  /** The one cache's size, in trace blocks (fleetKvTraceBlocks for a fleet's total KV). */
  capacityBlocks: number;
}

/** What one shared LRU cache of a fleet's total KV would have held of a trace. */
export interface SharedLruReference {
  requests: number;
  capacityBlocks: number;
  inputTokens: number;
  cachedTokens: number;
  /** cachedTokens / inputTokens, 0 for an empty trace. */
  cachedTokenShare: number;
  /** Blocks evicted over the trace. */
  evictions: number;
}

/** A fleet's total KV in trace blocks: what the shared LRU reference point is given. */
export function fleetKvTraceBlocks(fleet: { workers: number; kvBlocks: number; blockSize: number }, traceBlockSize: number): number {
  return Math.floor((fleet.workers * fleet.kvBlocks * fleet.blockSize) / traceBlockSize);
}

const NONE = -1;

/**
 * A reference point, not a ceiling: the trace served by one prefix cache of
 * `capacityBlocks` trace blocks, as if the fleet's KV were one pool every request
 * could reach. Requests in the order given; each finds cached the longest resident
 * run of its leading blocks (prefix-consistent, counted as the simulator counts a hit),
 * then touches its whole prompt, deepest block first, so that a block is always more
 * recent than every block below it. Eviction takes the least recently used block, which
 * is therefore always a leaf: SGLang's radix cache evicts least-recent leaves, and vLLM
 * frees a request's blocks tail first, so neither strands a suffix without its prefix.
 * With that order the cache holds exactly the most recent `capacityBlocks` blocks, so a
 * larger cache never holds less (LRU's inclusion property). No request is running, so
 * nothing is pinned, and prompts no longer than the cache are kept whole; a real
 * fleet splits the pool, pins running requests and routes imperfectly, so it may land
 * above or below this figure, never above traceCacheCeiling.
 */
export function sharedLruReference(trace: readonly TraceRequest[], o: SharedLruOptions): SharedLruReference {
  const capacity = Math.max(0, Math.floor(o.capacityBlocks));
  let longest = 0;
  let references = 0;
  for (const r of trace) {
    longest = Math.max(longest, r.hashIds.length);
    references += r.hashIds.length;
  }
  // Nodes alive at once: the cache plus one prompt beyond it, and the root.
  const slots = Math.min(references, capacity + longest) + 1;
  const keys = new PrefixChainKeys(trace, slots);
  const children = new Map<number | string, number>();
  const keyOf: Array<number | string> = new Array<number | string>(slots);
  const held = new Float64Array(slots);
  // Least recent first: a doubly linked list through the node slots.
  const prev = new Int32Array(slots).fill(NONE);
  const next = new Int32Array(slots).fill(NONE);
  let head = NONE;
  let tail = NONE;
  let size = 0;
  const free: number[] = [];
  for (let s = slots - 1; s >= 1; s--) free.push(s);
  const unlink = (n: number): void => {
    const p = prev[n]!;
    const q = next[n]!;
    if (p === NONE) head = q;
    else next[p] = q;
    if (q === NONE) tail = p;
    else prev[q] = p;
    prev[n] = next[n] = NONE;
  };
  const append = (n: number): void => {
    prev[n] = tail;
    next[n] = NONE;
    if (tail === NONE) head = n;
    else next[tail] = n;
    tail = n;
  };

  let inputTokens = 0;
  let cachedTokens = 0;
  let evictions = 0;
  const path: number[] = [];
  for (const r of trace) {
    inputTokens += r.inputLength;
    const seen = deepestKnown(children, keys, r.hashIds);
    let node = seen.node;
    const matched = seen.matched;
    cachedTokens += cachedTokensOf(matched, r.inputLength, matched > 0 ? held[node]! : 0, o);
    if (capacity === 0) continue;
    path.length = 0;
    node = 0;
    for (const id of r.hashIds) {
      const k = keys.key(node, id);
      let child = children.get(k);
      if (child === undefined) {
        child = free.pop()!;
        children.set(k, child);
        keyOf[child] = k;
        held[child] = 0;
        size++;
      } else {
        unlink(child);
      }
      if (held[child]! < r.inputLength) held[child] = r.inputLength;
      path.push(child);
      node = child;
    }
    for (let i = path.length - 1; i >= 0; i--) append(path[i]!);
    while (size > capacity) {
      const victim = head;
      unlink(victim);
      children.delete(keyOf[victim]!);
      free.push(victim);
      size--;
      evictions++;
    }
  }
  return {
    requests: trace.length,
    capacityBlocks: capacity,
    inputTokens,
    cachedTokens,
    cachedTokenShare: inputTokens > 0 ? cachedTokens / inputTokens : 0,
    evictions,
  };
}
