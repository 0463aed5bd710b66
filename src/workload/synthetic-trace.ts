import { Rng } from '../sim/index.js';
import type { TraceRequest } from './mooncake-trace.js';

/**
 * Traces in the Mooncake format made here, for tests and benchmarks: the published
 * traces are not shipped (docs/bench.md §Traces). Deterministic for a seed.
 */
export interface ConversationTraceOptions {
  requests: number;
  /** Mean arrivals per second (Poisson). */
  rate: number;
  /** Tokens per hash id. */
  blockSize: number;
  /** Applications, each with its own system prompt; a conversation opens with one (Zipf 1.0). */
  apps: number;
  systemTokens: number;
  /** Conversations going on at once; a finished one is replaced by a new one. */
  sessions: number;
  /** Mean tokens a user turn adds (exponential). */
  turnTokens: number;
  /** Mean output tokens (exponential, at least 1). */
  outputTokens: number;
  /** A conversation ends once its context passes this many tokens. */
  maxContextTokens: number;
  seed: number;
}

/** The conversation shape without its length, rate and seed: what a named shape fixes. */
export type ConversationShape = Omit<ConversationTraceOptions, 'requests' | 'rate' | 'seed'>;

/**
 * Mooncake's conversation trace as published (mean input about 12K tokens, output 343,
 * 512-token hash ids): the shape perf/trace-conversations.ts replays.
 */
export const MOONCAKE_CONVERSATIONS: ConversationShape = {
  blockSize: 512,
  apps: 8,
  systemTokens: 4096,
  sessions: 400,
  turnTokens: 2000,
  outputTokens: 343,
  maxContextTokens: 19_000,
};

/**
 * The same kind of traffic scaled down for 4 small engines (64-token hash ids, prompts
 * of a few thousand tokens): fast enough for tests, saturating at tens of requests/s.
 */
export const SMALL_CONVERSATIONS: ConversationShape = {
  blockSize: 64,
  apps: 3,
  systemTokens: 1024,
  sessions: 24,
  turnTokens: 200,
  outputTokens: 40,
  maxContextTokens: 6000,
};

/**
 * Multi-turn conversations as in Mooncake's conversation trace: each turn's prompt is
 * the previous prompt, its answer and a new user message, so its leading hash ids
 * repeat the previous turn's full blocks; the first blocks of every conversation of
 * an application are its system prompt's.
 */
export function conversationTrace(o: ConversationTraceOptions): TraceRequest[] {
  const rng = new Rng(o.seed);
  const exp = (mean: number): number => -Math.log(1 - rng.next()) * mean;
  let nextId = 1_000_000;
  const systemIds = Array.from({ length: o.apps }, (_, a) =>
    Array.from({ length: Math.floor(o.systemTokens / o.blockSize) }, (_, b) => a * 1000 + b),
  );
  const appWeights = Array.from({ length: o.apps }, (_, a) => 1 / (a + 1));
  const weightSum = appWeights.reduce((x, y) => x + y, 0);
  const pickApp = (): number => {
    let u = rng.next() * weightSum;
    for (let a = 0; a < o.apps; a++) if ((u -= appWeights[a]!) <= 0) return a;
    return o.apps - 1;
  };
  interface Session {
    /** Ids of the full blocks of the conversation's last prompt. */
    ids: number[];
    tokens: number;
  }
  const open = (): Session => {
    const app = pickApp();
    return { ids: [...systemIds[app]!], tokens: systemIds[app]!.length * o.blockSize };
  };
  const sessions = Array.from({ length: o.sessions }, open);
  const out: TraceRequest[] = [];
  let t = 0;
  for (let i = 0; i < o.requests; i++) {
    t += exp(1000 / o.rate);
    const k = Math.floor(rng.next() * sessions.length);
    let s = sessions[k]!;
    if (s.tokens > o.maxContextTokens) s = sessions[k] = open();
    const input = s.tokens + Math.max(1, Math.round(exp(o.turnTokens)));
    const output = Math.max(1, Math.round(exp(o.outputTokens)));
    // The previous prompt's full blocks keep their ids; the rest of the prompt is new.
    const ids = [...s.ids];
    while (ids.length < Math.ceil(input / o.blockSize)) ids.push(nextId++);
    out.push({ atMs: Math.round(t), inputLength: input, outputLength: output, hashIds: ids });
    // The next turn sees this prompt and its answer.
    s.tokens = input + output;
    s.ids = ids.slice(0, Math.floor(input / o.blockSize));
  }
  return out;
}

/** One trace request per line, as the published traces write them. */
export function toMooncakeJsonl(trace: readonly TraceRequest[]): string {
  return (
    trace
      .map((r) => JSON.stringify({ timestamp: r.atMs, input_length: r.inputLength, output_length: r.outputLength, hash_ids: r.hashIds }))
      .join('\n') + '\n'
  );
}
