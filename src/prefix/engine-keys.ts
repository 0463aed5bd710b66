import { blockHashes } from './block-hash.js';
import { keyChainOf } from './key-chain.js';
import { sglangPageChain } from './sglang-page-hash.js';
import { simWireWords } from './sim-wire-hash.js';

/**
 * The router's 52-bit index key for an engine's 64-bit block hash. The prefix index
 * keys by plain numbers (exact to 2^53), so the 64 bits are folded: the low 20 bits of
 * the high word stay, and its top 12 bits are mixed into the low word. A simulator
 * hash has 12 zero bits at the bottom (simWireWords), which the fold fills, so the
 * simulator's keys stay distinct; real engines' hashes are uniform, so folding costs
 * a collision rate of 2^-52 per pair.
 */
export function foldHash(hi: number, lo: number): number {
  return (hi & 0xfffff) * 0x1_0000_0000 + ((lo ^ (hi >>> 20)) >>> 0);
}

/**
 * How an engine hashes its KV blocks, so the router can compute a request's keys the
 * same way (docs/engine-push.md §Keying requests):
 * - `sim`: the simulator's chained hash, written as simWireWords;
 * - `sglang`: SGLang's SHA-256 page chain (sglangPageHashes);
 * - `tokens`: the router's own key chain (keyChain), for engines whose hashes cannot be
 *   reproduced outside them (vLLM's default hash pickles Python objects, and its root
 *   is random per process): their events are keyed by the tokens they carry instead.
 */
export type EngineHashScheme = 'sim' | 'sglang' | 'tokens';

/** Index keys of a token sequence's full blocks, as the engine's events name them. */
export function engineBlockKeys(tokens: ArrayLike<number>, blockSize: number, scheme: EngineHashScheme): number[] {
  if (scheme === 'sim') {
    return blockHashes(tokens, blockSize).map((h) => {
      const { hi, lo } = simWireWords(h);
      return foldHash(hi, lo);
    });
  }
  if (scheme === 'tokens') return keyChainOf(tokens, blockSize);
  return sglangChains.keys(tokens, blockSize);
}

function sglangKey(digest: Buffer): number {
  const hi = digest.readUInt32BE(0);
  const lo = digest.readUInt32BE(4);
  return foldHash(hi, lo);
}

/** Where a page chain stood after a checkpoint: resume from here. */
interface Checkpoint {
  readonly parent: Buffer;
  /** Keys of every page up to the checkpoint (a prefix of `keys`, shared by the request's checkpoints). */
  readonly keys: number[];
  readonly pages: number;
}

/**
 * SGLang's SHA-256 page chain costs about 1.6 µs a page, 10 ms for a 100K-token prompt
 * in pages of 16: too much per request. Prompts repeat their beginnings (a system
 * prompt, a conversation so far), so the chain is remembered at checkpoints every
 * ~1,024 tokens, keyed by a cheap chained hash of the tokens up to there: a prompt
 * resumes from the furthest checkpoint it shares with one seen before, and hashes
 * only the rest (bench/tokenizer-keying.ts).
 */
class SglangChains {
  readonly #checkpoints = new Map<number, Checkpoint>();
  static readonly MAX_CHECKPOINTS = 16_384;

  keys(tokens: ArrayLike<number>, pageSize: number): number[] {
    const pages = Math.floor(tokens.length / pageSize);
    const span = pageSize * Math.max(1, Math.round(1024 / pageSize));
    // Chained hashes of the tokens in checkpoint-sized chunks: chunk j covers tokens [0, (j + 1) × span).
    // The page size is part of the mark: the same tokens chain differently in other pages.
    const marks = blockHashes(tokens, span).map((h) => h + pageSize);
    let resume: Checkpoint | undefined;
    let from = marks.length - 1;
    for (; from >= 0; from--) {
      const c = this.#checkpoints.get(marks[from]!);
      if (c !== undefined && c.pages === ((from + 1) * span) / pageSize) {
        resume = c;
        break;
      }
    }
    const keys = resume ? resume.keys.slice(0, resume.pages) : [];
    const pagesPerSpan = span / pageSize;
    let next = from + 1; // the next checkpoint to record
    sglangPageChain(tokens, keys.length * pageSize, pages * pageSize, pageSize, resume?.parent, (digest) => {
      keys.push(sglangKey(digest));
      if (next < marks.length && keys.length === (next + 1) * pagesPerSpan) {
        this.#remember(marks[next]!, { parent: digest, keys, pages: keys.length });
        next++;
      }
    });
    return keys;
  }

  #remember(mark: number, c: Checkpoint): void {
    if (this.#checkpoints.has(mark)) return;
    if (this.#checkpoints.size >= SglangChains.MAX_CHECKPOINTS) {
      // Oldest first: the Map keeps insertion order.
      const oldest = this.#checkpoints.keys().next().value as number;
      this.#checkpoints.delete(oldest);
    }
    this.#checkpoints.set(mark, c);
  }
}

const sglangChains = new SglangChains();
