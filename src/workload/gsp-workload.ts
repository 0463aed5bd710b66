import { Rng } from '../sim/index.js';
import type { TraceRequest } from './mooncake-trace.js';
import { Zipf } from './zipf.js';

/**
 * SGLang bench_serving's `generated-shared-prefix` dataset, with its parameter names and
 * defaults (docs/bench.md §Shared-prefix workload): groups of prompts that share a
 * system prompt, each prompt a question of its own; optionally multi-turn, where turn
 * k resends the conversation so far (system, q0, a0, …, qk) once turn k−1 finished.
 */
export interface GspOptions {
  numGroups: number;
  promptsPerGroup: number;
  systemPromptLen: number;
  questionLen: number;
  outputLen: number;
  /** Lengths are drawn uniformly from [L × ratio, L]; 1 keeps them fixed. */
  rangeRatio: number;
  numTurns: number;
  /** uniform: every group gets promptsPerGroup; zipf: each prompt picks its group, P(g) ∝ 1/(g+1)^alpha. */
  groupDistribution: 'uniform' | 'zipf';
  zipfAlpha: number | undefined;
  /** Conversations per second (Poisson); undefined sends them all at time 0, as bench_serving's default `inf`. */
  rate: number | undefined;
  /** Keep conversations in group order instead of shuffling them. */
  ordered: boolean;
  seed: number;
}

export const GSP_DEFAULTS: Omit<GspOptions, 'rate' | 'seed'> = {
  numGroups: 64,
  promptsPerGroup: 16,
  systemPromptLen: 2048,
  questionLen: 128,
  outputLen: 256,
  rangeRatio: 1,
  numTurns: 1,
  groupDistribution: 'uniform',
  zipfAlpha: undefined,
  ordered: false,
};

/** Tokens per hash id of a generated workload: the router's and the engines' block. */
export const GSP_BLOCK_TOKENS = 16;

/**
 * The workload as trace requests (blocks of GSP_BLOCK_TOKENS): equal ids where two
 * prompts hold the same tokens up to the block's end, so prefixes are shared exactly as
 * the dataset shares them. A later turn names the request it follows (`after`).
 */
export function gspTrace(o: GspOptions): TraceRequest[] {
  const rng = new Rng(o.seed);
  const draw = (len: number): number => {
    const lo = Math.max(1, Math.floor(len * o.rangeRatio));
    return lo + Math.floor(rng.next() * (len - lo + 1));
  };
  const systemLen = Array.from({ length: o.numGroups }, () => draw(o.systemPromptLen));
  // Which group each conversation belongs to.
  let groups: number[];
  if (o.groupDistribution === 'zipf') {
    const zipf = new Zipf(o.numGroups, o.zipfAlpha ?? 1);
    groups = Array.from({ length: o.numGroups * o.promptsPerGroup }, () => zipf.sample(rng));
    groups.sort((a, b) => a - b);
  } else groups = Array.from({ length: o.numGroups * o.promptsPerGroup }, (_, i) => Math.floor(i / o.promptsPerGroup));
  const conversations = groups.map((g, i) => ({ g, i }));
  if (!o.ordered) {
    for (let i = conversations.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [conversations[i], conversations[j]] = [conversations[j]!, conversations[i]!];
    }
  }
  const ids = new Map<string, number>();
  const out: TraceRequest[] = [];
  let t = 0;
  for (const { g, i } of conversations) {
    if (o.rate !== undefined) t += -Math.log(1 - rng.next()) * (1000 / o.rate);
    const output = draw(o.outputLen);
    // The conversation so far, as [segment, length] pieces.
    const segments: Array<[string, number]> = [[`s${g}`, systemLen[g]!]];
    let previous = -1;
    for (let k = 0; k < o.numTurns; k++) {
      segments.push([`q${i}.${k}`, draw(o.questionLen)]);
      const hashIds = blockIds(segments, ids);
      const input = segments.reduce((a, [, n]) => a + n, 0);
      out.push({
        atMs: previous < 0 ? Math.round(t) : 0,
        inputLength: input,
        outputLength: output,
        hashIds,
        ...(previous >= 0 ? { after: previous } : {}),
      });
      previous = out.length - 1;
      segments.push([`a${i}.${k}`, output]);
    }
  }
  return out;
}

/** One id per block of the pieces' tokens: the same id exactly where the same tokens lead up to the block's end. */
function blockIds(segments: ReadonlyArray<readonly [string, number]>, ids: Map<string, number>): number[] {
  const out: number[] = [];
  let key = '';
  let inBlock = 0;
  const close = (): void => {
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = ids.size));
    out.push(id);
    key = `#${id}`;
    inBlock = 0;
  };
  for (const [name, length] of segments) {
    let at = 0;
    while (at < length) {
      const take = Math.min(length - at, GSP_BLOCK_TOKENS - inBlock);
      key += `|${name}@${at}+${take}`;
      at += take;
      inBlock += take;
      if (inBlock === GSP_BLOCK_TOKENS) close();
    }
  }
  if (inBlock > 0) close();
  return out;
}
