import type { TraceRequest } from './mooncake-trace.js';

/** How trace blocks and engine blocks relate when cached tokens are counted. */
export interface CacheCountOptions {
  /** Tokens per hash id in the trace (512 in the published Mooncake traces). */
  traceBlockSize: number;
  /** Tokens per engine KV block: hits are counted in whole engine blocks, as the simulator counts them. */
  engineBlockSize: number;
}

/**
 * Node keys of a prefix tree over hash ids: a child is known by its parent's node and
 * its own id, so the same id under two prefixes is two nodes (prefix consistency). A
 * number key while parent × ids stays exact in a double, a string beyond.
 */
export class PrefixChainKeys {
  private readonly span: number;
  private readonly numeric: boolean;

  constructor(trace: readonly TraceRequest[], maxNodes: number) {
    let maxId = 0;
    for (const r of trace) for (const id of r.hashIds) if (id > maxId) maxId = id;
    this.span = maxId + 1;
    this.numeric = (maxNodes + 1) * this.span < Number.MAX_SAFE_INTEGER;
  }

  key(parent: number, id: number): number | string {
    return this.numeric ? parent * this.span + id : `${parent},${id}`;
  }
}

/**
 * How far a request's hash ids run down the tree already built: the deepest node
 * reached and how many leading blocks that is (0 and 0 when its first block is new).
 */
export function deepestKnown(
  children: ReadonlyMap<number | string, number>,
  keys: PrefixChainKeys,
  hashIds: readonly number[],
): { node: number; matched: number } {
  let node = 0;
  let matched = 0;
  for (const id of hashIds) {
    const child = children.get(keys.key(node, id));
    if (child === undefined) break;
    node = child;
    matched++;
  }
  return { node, matched };
}

/**
 * Tokens of a request the engine finds cached when its first `matchedBlocks` trace
 * blocks were seen as that prefix, and the longest earlier request through them was
 * `heldTokens` long. The two prompts agree on min(matched blocks' tokens, both
 * lengths) tokens (a partial last block is a prefix of the full one, being the same
 * id's tokens); the engine hits whole blocks of its own and always computes the last
 * prompt token (src/sim/engine-core.ts, prefixHits).
 */
export function cachedTokensOf(matchedBlocks: number, inputLength: number, heldTokens: number, o: CacheCountOptions): number {
  if (matchedBlocks === 0 || inputLength <= 1) return 0;
  const common = Math.min(matchedBlocks * o.traceBlockSize, inputLength, heldTokens);
  const hits = Math.min(Math.floor(common / o.engineBlockSize), Math.floor((inputLength - 1) / o.engineBlockSize));
  return hits * o.engineBlockSize;
}
