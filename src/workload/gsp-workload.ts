import { Rng } from '../sim/index.js';
import type { TraceRequest } from './mooncake-trace.js';
import { Zipf } from './zipf.js';
import type { GspOptions } from './gsp-options.js';

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
