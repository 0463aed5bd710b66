/**
 * What in-process simulated engines hold and are computing, for benches that judge
 * routing against the engines themselves rather than against a router's index.
 *
 * - `held`: leading blocks of a prompt each engine's cache holds now
 *   (SimEngine.heldPrefixBlocks). A block enters the cache, and its BlockStored
 *   event leaves, when the prefill that computed it completes.
 * - `pending`: leading blocks of a prompt each engine has been sent and not yet
 *   finished: requests inside the engine (waiting, prefilling or decoding), found by
 *   wrapping the instance's `submit`. Where pending exceeds held, the engine is still
 *   computing (or about to compute) blocks no KV event has announced yet: the event
 *   gap a predicted entry would cover.
 */
import { blockHashes } from '../../src/prefix/index.js';
import type { SimEngine } from '../../src/sim/index.js';

export class EngineWatch {
  readonly engines: readonly SimEngine[];
  /** Per engine, the prompt blocks of the requests inside it. */
  private readonly inside: Array<Set<Set<number>>>;

  constructor(engines: readonly SimEngine[], blockSize: number) {
    this.engines = engines;
    this.inside = engines.map(() => new Set<Set<number>>());
    engines.forEach((engine, e) => {
      const submit = engine.submit.bind(engine);
      const inside = this.inside[e]!;
      engine.submit = (input, observer, dpRank) => {
        const blocks = new Set(blockHashes(input.promptTokens, blockSize));
        const result = submit(
          input,
          {
            onToken: (piece, index, at) => observer.onToken(piece, index, at),
            onFinish: (req) => {
              inside.delete(blocks);
              observer.onFinish(req);
            },
          },
          dpRank,
        );
        if (result.ok) inside.add(blocks);
        return result;
      };
    });
  }

  /** Leading blocks of the prompt (its block hashes) each engine's cache holds now. */
  held(tokens: ArrayLike<number>): number[] {
    return this.engines.map((e) => e.heldPrefixBlocks(tokens));
  }

  /** Leading blocks of the prompt each engine has inside it in a request not yet finished. */
  pending(hashes: readonly number[]): number[] {
    return this.inside.map((set) => {
      let best = 0;
      for (const blocks of set) best = Math.max(best, depthIn(blocks, hashes));
      return best;
    });
  }

  /** Requests waiting or running in each engine (all ranks), as the engine counts them. */
  load(): number[] {
    return this.engines.map((e) => e.ranks.reduce((x, r) => x + r.waitingCount + r.runningCount, 0));
  }

  /** The engine's real waiting count (summed over ranks). */
  waiting(): number[] {
    return this.engines.map((e) => e.ranks.reduce((x, r) => x + r.waitingCount, 0));
  }

  get busy(): boolean {
    return this.engines.some((e) => e.ranks.some((r) => r.busy));
  }
}

/** Leading blocks of `hashes` in `set` (a chained hash names every block up to it). */
export function depthIn(set: ReadonlySet<number>, hashes: readonly number[]): number {
  let d = 0;
  while (d < hashes.length && set.has(hashes[d]!)) d++;
  return d;
}
