import { blockHashChain, blockHashesAfter } from '../prefix/index.js';
import type { BlockHashState } from '../prefix/index.js';

/**
 * A prompt as the engine's prefix cache sees it: its length, the keys of its whole
 * blocks, and how the key chain goes on over what follows them (the rest of the
 * prompt, then the output), which is all the cache needs. Two prompts share a block's
 * key exactly when they share every token up to the end of that block, so the cache
 * behaves the same whatever the keys' values.
 *
 * From tokens (tokenPrompt) the keys are blockHashes of them. A replayed trace can key
 * its prompts from its own block ids instead (src/workload/trace-block-keys.ts) and
 * never make the ~12K-token arrays of a long prompt.
 */
export interface KeyedPrompt {
  /** Prompt tokens. */
  readonly length: number;
  /** Tokens per block the keys are of: the engine's own. */
  readonly blockSize: number;
  /** Keys of the prompt's whole blocks, in order; shared, never changed. */
  readonly blockKeys: readonly number[];
  /**
   * Keys of the whole blocks of the prompt and `output` together beyond the prompt's
   * own whole blocks: those the prompt's last, partial block and the output fill.
   */
  keysAfter(output: readonly number[]): number[];
  /** The prompt's token ids: made only for a KV-event listener, which carries them. */
  tokens(): readonly number[];
}

/** A prompt known by its tokens, keyed as blockHashes keys them. */
export function tokenPrompt(tokens: readonly number[], blockSize: number): KeyedPrompt {
  const { hashes, state } = blockHashChain(tokens, blockSize);
  return new TokenPrompt(tokens, blockSize, hashes, state);
}

class TokenPrompt implements KeyedPrompt {
  constructor(
    private readonly ids: readonly number[],
    readonly blockSize: number,
    readonly blockKeys: readonly number[],
    private readonly state: BlockHashState,
  ) {}

  get length(): number {
    return this.ids.length;
  }

  keysAfter(output: readonly number[]): number[] {
    const tail = this.ids.slice(this.state.blocks * this.blockSize);
    for (const t of output) tail.push(t);
    return blockHashesAfter(this.state, tail, this.blockSize);
  }

  tokens(): readonly number[] {
    return this.ids;
  }
}
