import { PrefixChainKeys, cachedTokensOf, deepestKnown } from './prefix-chain.js';
import type { CacheCountOptions } from './prefix-chain.js';
import type { TraceRequest } from './mooncake-trace.js';

/** What an infinite prefix cache would have held of a trace (docs/simulator.md §The cache ceiling). */
export interface CacheCeiling {
  requests: number;
  inputTokens: number;
  /** Prompt tokens an infinite, prefix-consistent cache would have served. */
  cachedTokens: number;
  /** cachedTokens / inputTokens, 0 for an empty trace: the ceiling no routing can pass. */
  cachedTokenShare: number;
  /** Hash ids referenced, over all requests. */
  blockReferences: number;
  /** References to an id an earlier request referenced, wherever it stood: the plain figure peers quote. */
  repeatedReferences: number;
  /** repeatedReferences / blockReferences, 0 for an empty trace. */
  repeatedReferenceShare: number;
}

/**
 * The infinite-cache ceiling of a trace, with requests taken in the order given
 * (arrival order): each request finds cached the longest run of its leading blocks that
 * an earlier request had as the same prefix, counted in tokens the way the simulator
 * counts a hit (cachedTokensOf), and then caches its whole prompt. Nothing is ever
 * evicted and a request's blocks are there for the very next one, so no fleet, however
 * routed, caches more of the trace; an engine that reorders its queue (SGLang's lpm)
 * could in principle serve a prefix from a later arrival, which this order does not
 * count. Beside it, the share of block references that repeat, the figure peers quote
 * ("36.64 % of block references repeat"); it ignores prefixes, so it is not a bound.
 * Linear in the trace's block references.
 */
export function traceCacheCeiling(trace: readonly TraceRequest[], o: CacheCountOptions): CacheCeiling {
  let references = 0;
  for (const r of trace) references += r.hashIds.length;
  const keys = new PrefixChainKeys(trace, references + 1);
  const children = new Map<number | string, number>();
  // Per node (0 is the empty prefix): the longest earlier request through it, in tokens.
  const held: number[] = [0];
  const seenIds = new Set<number>();
  let inputTokens = 0;
  let cachedTokens = 0;
  let repeated = 0;
  for (const r of trace) {
    inputTokens += r.inputLength;
    const seen = deepestKnown(children, keys, r.hashIds);
    let node = seen.node;
    const matched = seen.matched;
    cachedTokens += cachedTokensOf(matched, r.inputLength, held[node]!, o);
    for (const id of r.hashIds) if (seenIds.has(id)) repeated++;
    node = 0;
    for (const id of r.hashIds) {
      const k = keys.key(node, id);
      let child = children.get(k);
      if (child === undefined) {
        child = held.length;
        held.push(0);
        children.set(k, child);
      }
      if (held[child]! < r.inputLength) held[child] = r.inputLength;
      node = child;
    }
    for (const id of r.hashIds) seenIds.add(id);
  }
  return {
    requests: trace.length,
    inputTokens,
    cachedTokens,
    cachedTokenShare: inputTokens > 0 ? cachedTokens / inputTokens : 0,
    blockReferences: references,
    repeatedReferences: repeated,
    repeatedReferenceShare: references > 0 ? repeated / references : 0,
  };
}
