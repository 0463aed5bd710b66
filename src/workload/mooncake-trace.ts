import { createHash } from 'node:crypto';

/**
 * A request trace in the Mooncake format (FAST'25 releases; docs/bench.md §Traces):
 * one JSON object per line with `timestamp` (ms from the trace's start),
 * `input_length` and `output_length` (tokens) and `hash_ids`, one id per block of the
 * prompt (512 tokens in the published traces; the last block may be partial): equal
 * ids at the same position are the same block, so a shared run of ids is a shared
 * prefix.
 */
export interface TraceRequest {
  /** Arrival, ms from the trace's start. */
  readonly atMs: number;
  readonly inputLength: number;
  readonly outputLength: number;
  readonly hashIds: readonly number[];
  /**
   * A later turn of a conversation (generated workloads only; Mooncake files have no
   * such field): the index of the request it follows. It is sent `atMs` after that one
   * finished, not at a time of the trace.
   */
  readonly after?: number;
}

export interface TraceProblem {
  readonly line: number;
  readonly reason: string;
}

/** The requests of a trace, in file order, and every line that is not one (with its number). */
export function parseMooncakeTrace(text: string, blockSize: number): { requests: TraceRequest[]; problems: TraceProblem[] } {
  const requests: TraceRequest[] = [];
  const problems: TraceProblem[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const n = i + 1;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch {
      problems.push({ line: n, reason: 'not JSON' });
      return;
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) {
      problems.push({ line: n, reason: 'not a JSON object' });
      return;
    }
    const whole = (k: string, min: number): number | string => {
      const v = o[k];
      return typeof v === 'number' && Number.isSafeInteger(v) && v >= min
        ? v
        : `${k} is ${v === undefined ? 'missing' : JSON.stringify(v)?.slice(0, 32)}, not a whole number${min > 0 ? ` ≥ ${min}` : ''}`;
    };
    const at =
      typeof o.timestamp === 'number' && Number.isFinite(o.timestamp) && o.timestamp >= 0
        ? o.timestamp
        : `timestamp is ${o.timestamp === undefined ? 'missing' : JSON.stringify(o.timestamp)?.slice(0, 32)}, not a number ≥ 0`;
    const input = whole('input_length', 1);
    const output = whole('output_length', 1);
    const ids = o.hash_ids;
    for (const v of [at, input, output]) {
      if (typeof v === 'string') {
        problems.push({ line: n, reason: v });
        return;
      }
    }
    if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0)) {
      problems.push({ line: n, reason: 'hash_ids is not a list of whole numbers' });
      return;
    }
    const want = Math.ceil((input as number) / blockSize);
    if (ids.length !== want) {
      problems.push({
        line: n,
        reason: `${ids.length} hash_ids for ${input} input tokens; blocks of ${blockSize} need ${want} (--trace-block-size?)`,
      });
      return;
    }
    requests.push({ atMs: at as number, inputLength: input as number, outputLength: output as number, hashIds: ids as number[] });
  });
  return { requests, problems };
}

/**
 * The part of a trace to replay: requests from `fromMs` to `toMs` (trace time), the
 * first `limit` of them, re-timed from 0 and compressed by `speedup`.
 */
export function selectTrace(
  requests: readonly TraceRequest[],
  o: { fromMs?: number; toMs?: number; limit?: number; speedup?: number },
): TraceRequest[] {
  const from = o.fromMs ?? 0;
  const to = o.toMs ?? Infinity;
  const picked = requests.filter((r) => r.atMs >= from && r.atMs < to).slice(0, o.limit ?? Infinity);
  const t0 = picked[0]?.atMs ?? 0;
  const speed = o.speedup ?? 1;
  return picked.map((r) => ({ ...r, atMs: (r.atMs - t0) / speed }));
}

/** Tokens a trace request's prompt is made of: block i is the same tokens wherever its id appears, the last one cut to the input length. */
export function tracePromptTokens(r: TraceRequest, blockSize: number, vocab = TRACE_VOCAB): number[] {
  const out = new Array<number>(r.inputLength);
  for (let b = 0; b < r.hashIds.length; b++) {
    let s = traceBlockSeed(r.hashIds[b]!);
    const end = Math.min(r.inputLength, (b + 1) * blockSize);
    for (let i = b * blockSize; i < end; i++) {
      s ^= s << 13;
      s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      // Ids from 100 up: below are the stand-in tokenizer's specials.
      out[i] = 100 + (s % (vocab - 100));
    }
  }
  return out;
}

/** The token vocabulary tracePromptTokens draws from by default. */
export const TRACE_VOCAB = 32_000;

/**
 * The state a block's tokens are drawn from (a small PRNG's, xorshift32): a function
 * of its id alone, so two ids with the same seed are the same tokens.
 */
export function traceBlockSeed(id: number): number {
  return (id * 2654435761 + 0x9e3779b9) >>> 0;
}

/** Tokens `from`..`to` (offsets in the block) of the block whose id has this seed: tracePromptTokens's, no more. */
export function traceBlockTokens(seed: number, from: number, to: number, vocab = TRACE_VOCAB): number[] {
  const out = new Array<number>(Math.max(0, to - from));
  traceBlockTokensInto(seed, from, to, out, vocab);
  return out;
}

/** traceBlockTokens written into out[0..to - from): for a caller that reuses one array. */
export function traceBlockTokensInto(seed: number, from: number, to: number, out: number[] | Float64Array, vocab = TRACE_VOCAB): void {
  let s = seed;
  for (let i = 0; i < to; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    if (i >= from) out[i - from] = 100 + (s % (vocab - 100));
  }
}

/** For each request that later turns follow, their indices: who leaves when it finishes. */
export function traceFollowers(requests: readonly TraceRequest[]): Map<number, number[]> {
  const next = new Map<number, number[]>();
  requests.forEach((r, i) => {
    if (r.after === undefined) return;
    const list = next.get(r.after);
    if (list) list.push(i);
    else next.set(r.after, [i]);
  });
  return next;
}

/** A digest of what a run replays, so two runs can be shown to be the same workload. */
export function traceDigest(requests: readonly TraceRequest[]): string {
  const h = createHash('sha256');
  for (const r of requests)
    h.update(`${r.atMs},${r.inputLength},${r.outputLength},${r.hashIds.join(' ')}${r.after === undefined ? '' : `,after ${r.after}`}\n`);
  return h.digest('hex').slice(0, 16);
}
