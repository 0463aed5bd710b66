import { blockHashes } from './block-hash.js';
import { keyChainOf } from './key-chain.js';
import { pageChainWords } from './sha256-pages.js';
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

/** Where a page chain stood after a checkpoint: resume from here. */
interface Checkpoint {
  /** The digest words (sha256-pages.ts) of the checkpoint's last page. */
  readonly parent: Int32Array;
  /** Keys of every page up to the checkpoint (a prefix of `keys`, shared by the request's checkpoints). */
  readonly keys: number[];
  readonly pages: number;
}

/**
 * SGLang's SHA-256 page chain costs a compression or more a page: at its default page
 * size of 1, 100K of them for a 100K-token prompt, run in JavaScript on digest words
 * (sha256-pages.ts: about 0.3 µs a page, a fifth of node:crypto's createHash per page).
 * Prompts repeat their beginnings (a system prompt, a conversation so far), so the
 * chain is remembered at checkpoints every ~1,024 tokens, keyed by a cheap chained hash
 * of the tokens up to there: a prompt resumes from the furthest checkpoint it shares
 * with one seen before, and hashes only the rest (perf/tokenizer-keying.ts).
 */
class SglangChains {
  /** Least recently used first: a hit moves its checkpoint to the back. */
  readonly #checkpoints = new Map<number, Checkpoint>();
  /**
   * The key arrays the checkpoints hold, each shared by one prompt's checkpoints, with
   * how many hold it: memory is bounded by the keys held, since at a page size of 1 a
   * 100K-token prompt's array is 100K keys (800 KB) and a count of checkpoints alone
   * let a few hundred prompts keep over 100 MB.
   */
  readonly #arrays = new Map<number[], { holders: number; length: number }>();
  #heldKeys = 0;
  static readonly MAX_CHECKPOINTS = 16_384;
  /** 32 MiB of keys: about 40 prompts of 100K tokens at pages of 1, 670 at pages of 16. */
  static readonly MAX_HELD_KEYS = 4 * 1024 * 1024;

  /** Keys held by the checkpoints now (for tests and benches). */
  get heldKeys(): number {
    return this.#heldKeys;
  }

  keys(tokens: ArrayLike<number>, pageSize: number): number[] {
    const pages = Math.floor(tokens.length / pageSize);
    const span = pageSize * Math.max(1, Math.round(1024 / pageSize));
    const pagesPerSpan = span / pageSize;
    // Chained hashes of the tokens in checkpoint-sized chunks: chunk j covers tokens [0, (j + 1) × span).
    // The page size is part of the mark: the same tokens chain differently in other pages.
    const marks = blockHashes(tokens, span).map((h) => h + pageSize);
    let resume: Checkpoint | undefined;
    let from = marks.length - 1;
    for (; from >= 0; from--) {
      const c = this.#checkpoints.get(marks[from]!);
      if (c !== undefined && c.pages === (from + 1) * pagesPerSpan) {
        resume = c;
        // Recently used goes to the back: a hot system prompt's checkpoints are the last to go.
        this.#checkpoints.delete(marks[from]!);
        this.#checkpoints.set(marks[from]!, c);
        break;
      }
    }
    // The keys up to the checkpoint are copied from it; at pages of 1 that copy is most of
    // a resumed prompt's cost, so it is made once, to the full length where the remembered
    // array is long enough (its later entries, another prompt's, are then overwritten).
    const keys = resume ? resume.keys.slice(0, Math.max(resume.pages, Math.min(pages, resume.keys.length))) : [];
    const state = new Int32Array(8);
    if (resume) state.set(resume.parent);
    let at = resume ? resume.pages : 0; // pages hashed so far; the chain has a parent once there is one
    for (let next = from + 1; next < marks.length; next++) {
      const end = (next + 1) * pagesPerSpan;
      pageChainWords(tokens, at * pageSize, end * pageSize, pageSize, state, at > 0, keys, undefined, undefined, at);
      at = end;
      this.#remember(marks[next]!, { parent: state.slice(), keys, pages: end }, pages);
    }
    pageChainWords(tokens, at * pageSize, pages * pageSize, pageSize, state, at > 0, keys, undefined, undefined, at);
    return keys;
  }

  /** @param length the length `c.keys` will have once its prompt is keyed */
  #remember(mark: number, c: Checkpoint, length: number): void {
    if (this.#checkpoints.has(mark)) return;
    const held = this.#arrays.get(c.keys);
    if (held) held.holders++;
    else {
      this.#arrays.set(c.keys, { holders: 1, length });
      this.#heldKeys += length;
    }
    this.#checkpoints.set(mark, c);
    while (
      this.#checkpoints.size > SglangChains.MAX_CHECKPOINTS ||
      (this.#heldKeys > SglangChains.MAX_HELD_KEYS && this.#checkpoints.size > 1)
    ) {
      // Least recently used first: the Map keeps insertion order, and a hit re-inserts.
      const [oldest, gone] = this.#checkpoints.entries().next().value as [number, Checkpoint];
      this.#checkpoints.delete(oldest);
      const a = this.#arrays.get(gone.keys)!;
      if (--a.holders === 0) {
        this.#arrays.delete(gone.keys);
        this.#heldKeys -= a.length;
      }
    }
  }
}

const sglangChains = new SglangChains();

/** Keys the SGLang checkpoints hold now: bounded by SglangChains.MAX_HELD_KEYS. */
export function sglangCheckpointKeys(): number {
  return sglangChains.heldKeys;
}
