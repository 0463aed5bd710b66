import { BLOCK_HASH_START, blockHashesAfter, fmix32 } from '../prefix/index.js';
import type { BlockHashState } from '../prefix/index.js';
import type { KeyedPrompt } from '../sim/index.js';
import { traceBlockSeed, traceBlockTokens, traceBlockTokensInto } from './mooncake-trace.js';
import type { TraceRequest } from './mooncake-trace.js';

/**
 * Block keys for a trace request's prompt made from its hash ids, not from its tokens:
 * what lets a replay skip making and hashing a ~12K-token array per request
 * (BENCHMARKS.md, section 10). A trace block of `traceBlockSize` tokens is `traceBlockSize /
 * blockSize` blocks of `blockSize`; block j's key chains the seeds of trace blocks
 * 0..b (b the trace block it lies in) with j's place inside block b.
 *
 * Two prompts get one key for block j exactly when tracePromptTokens gives them the
 * same tokens up to the end of block j (up to 52-bit collisions, as for blockHashes):
 * a block's tokens are drawn from its id's seed alone, and a partial last block is the
 * start of its id's tokens. Only equality of keys decides what a cache or the router's
 * index does, so keying this way or by blockHashes of the tokens gives the same
 * decisions, hits and times (test/virtual/trace-keying.test.ts compares the two).
 *
 * `blockSize` must divide `traceBlockSize` (traceKeyable).
 */
export function traceBlockKeys(r: TraceRequest, traceBlockSize: number, blockSize: number): number[] {
  const per = traceBlockSize / blockSize;
  const full = Math.floor(r.inputLength / blockSize);
  const out = new Array<number>(full);
  let hi = 0x510e527f;
  let lo = 0x9b05688c;
  for (let b = 0, j = 0; j < full; b++) {
    const seed = traceBlockSeed(r.hashIds[b]!);
    lo = fmix32(Math.imul(lo ^ seed, 0x01000193) ^ b);
    hi = fmix32(Math.imul(hi ^ (seed + 0x9e3779b9), 0x85ebca6b) ^ lo);
    for (let k = 0; k < per && j < full; k++, j++) {
      const klo = fmix32(lo ^ Math.imul(k + 1, 0x9e3779b1));
      const khi = fmix32(hi ^ klo);
      out[j] = (khi & 0xfffff) * 0x1_0000_0000 + klo;
    }
  }
  return out;
}

/** Whether prompts of a trace with blocks of `traceBlockSize` tokens can be keyed in blocks of `blockSize` (traceBlockKeys). */
export function traceKeyable(traceBlockSize: number, blockSize: number): boolean {
  return Number.isInteger(traceBlockSize / blockSize) && blockSize >= 1;
}

/**
 * A trace request's prompt as an engine keys it (KeyedPrompt), from traceBlockKeys:
 * `keys` are that request's keys at `blockSize`, shared with the router's lookup when
 * the two block sizes agree. Past the prompt's whole blocks the chain goes on as
 * blockHashes does, over real tokens (the few of the partial block, then the output),
 * from a state that is a function of the last whole block's key.
 */
export function tracePrompt(r: TraceRequest, traceBlockSize: number, blockSize: number, keys: readonly number[]): KeyedPrompt {
  return new TracePrompt(r, traceBlockSize, blockSize, keys);
}

/** What keysAfter hashes (the partial block's tokens, then the output), one array for every request: token ids fit a double exactly. */
let tailScratch = new Float64Array(1024);

class TracePrompt implements KeyedPrompt {
  constructor(
    private readonly r: TraceRequest,
    private readonly traceBlockSize: number,
    readonly blockSize: number,
    readonly blockKeys: readonly number[],
  ) {}

  get length(): number {
    return this.r.inputLength;
  }

  keysAfter(output: readonly number[]): number[] {
    const full = this.blockKeys.length;
    const start = full * this.blockSize;
    // The partial block's tokens all lie in one trace block: blockSize divides the trace's.
    const b = Math.floor(start / this.traceBlockSize);
    const partial = Math.max(0, this.r.inputLength - start);
    const n = partial + output.length;
    if (tailScratch.length < n) tailScratch = new Float64Array(Math.max(n, 2 * tailScratch.length));
    const tail = tailScratch;
    if (partial > 0) {
      const offset = b * this.traceBlockSize;
      traceBlockTokensInto(traceBlockSeed(this.r.hashIds[b]!), start - offset, this.r.inputLength - offset, tail);
    }
    for (let k = 0; k < output.length; k++) tail[partial + k] = output[k]!;
    return blockHashesAfter(this.chainState(), tail.subarray(0, n), this.blockSize);
  }

  tokens(): readonly number[] {
    const out: number[] = [];
    for (let b = 0; b < this.r.hashIds.length; b++) {
      const end = Math.min(this.traceBlockSize, this.r.inputLength - b * this.traceBlockSize);
      for (const t of traceBlockTokens(traceBlockSeed(this.r.hashIds[b]!), 0, end)) out.push(t);
    }
    return out;
  }

  /** Where the chain stands after the prompt's whole blocks. */
  private chainState(): BlockHashState {
    const full = this.blockKeys.length;
    if (full === 0) return BLOCK_HASH_START;
    const key = this.blockKeys[full - 1]!;
    return {
      hi: fmix32(Math.floor(key / 0x1_0000_0000) ^ 0x5bd1e995),
      lo: fmix32((key >>> 0) ^ 0x27d4eb2f),
      blocks: full,
    };
  }
}
