import type { PolicyWorker, PrefixMatch, PrefixSignal } from '../policies/index.js';
import type { PrefixIndex } from './prefix-index/index.js';
import type { PredictedPrefixes } from './kv-index/predicted-prefixes.js';

const NO_PREFIX: PrefixSignal = Object.freeze({ queryBlocks: 0, matches: Object.freeze([]) });

/**
 * A request's prefix as the cache-aware policy reads it: the workers of the current
 * pool that hold its leading blocks, and how many each holds (docs/routing.md). The
 * index answers into one reused buffer, so a lookup allocates only the matches it
 * returns, never per fleet.
 */
export class PrefixLookup {
  private readonly buffer: { slots: Int32Array; depths: Int32Array };
  /** Under an events index: what the router sent where, before the engines announced it (docs/routing.md §The event gap). */
  predicted: PredictedPrefixes<PolicyWorker> | undefined;

  /**
   * @param workerAt the worker an index owner slot belongs to, if any
   * @param inPool whether a worker may be selected now (an owner outside the pool is no candidate)
   */
  constructor(
    private readonly index: PrefixIndex,
    private readonly workerAt: (slot: number) => PolicyWorker | undefined,
    private readonly inPool: (worker: PolicyWorker) => boolean,
  ) {
    this.buffer = index.newMatchBuffer();
  }

  /** @param hints filled with where each walked block sits, for the owner's record later */
  signal(hashes: readonly number[], hints?: Int32Array): PrefixSignal {
    if (hashes.length === 0) return NO_PREFIX;
    const n = this.index.match(hashes, this.buffer, hashes.length, hints);
    const matches: PrefixMatch[] = [];
    for (let i = 0; i < n; i++) {
      const w = this.workerAt(this.buffer.slots[i]!);
      if (!w || !this.inPool(w)) continue;
      const blocks = this.buffer.depths[i]!;
      // An index fed by engine events has one owner per DP rank: a worker counts once, at its deepest rank.
      const seen = matches.findIndex((m) => m.worker === w);
      if (seen < 0) matches.push({ worker: w, blocks });
      else if (blocks > matches[seen]!.blocks) matches[seen] = { worker: w, blocks };
    }
    this.predicted?.deepen(hashes, matches, this.inPool);
    return { queryBlocks: hashes.length, matches };
  }
}
