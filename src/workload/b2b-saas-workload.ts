import { Rng } from '../sim/index.js';
import type { TraceRequest } from './mooncake-trace.js';

/** One stage of the ramp: Poisson arrivals at `rate` per second for `durationS` (inference-perf's `load.stages`). */
export interface RampStage {
  readonly rate: number;
  readonly durationS: number;
}

/**
 * llm-d's b2b-saas workload (docs/bench.md §Presets), as inference-perf's `shared_prefix`
 * data generates it: `groups` customers, each with a shared context of `systemLen`
 * tokens, and `promptsPerGroup` users per customer, each with a question of its own of
 * `questionLen` tokens. Every request is one of those prompts, drawn uniformly, so a
 * prompt recurs whole; arrivals follow the stages of the ramp.
 */
export interface B2bSaasOptions {
  groups: number;
  promptsPerGroup: number;
  systemLen: number;
  questionLen: number;
  outputLen: number;
  stages: readonly RampStage[];
  /** Tokens per hash id: a length that divides both the context and the question, so blocks never straddle them. */
  blockTokens: number;
  seed: number;
}

/** The workload as trace requests, in arrival order. */
export function b2bSaasTrace(o: B2bSaasOptions): TraceRequest[] {
  if (o.systemLen % o.blockTokens !== 0 || o.questionLen % o.blockTokens !== 0)
    throw new Error(`blockTokens ${o.blockTokens} must divide the context (${o.systemLen}) and the question (${o.questionLen})`);
  const rng = new Rng(o.seed);
  const systemBlocks = o.systemLen / o.blockTokens;
  const questionBlocks = o.questionLen / o.blockTokens;
  // Ids: every group's context first, then every user's question.
  const questionBase = o.groups * systemBlocks;
  const prompt = (g: number, u: number): number[] => {
    const ids: number[] = [];
    for (let b = 0; b < systemBlocks; b++) ids.push(g * systemBlocks + b);
    const q = questionBase + (g * o.promptsPerGroup + u) * questionBlocks;
    for (let b = 0; b < questionBlocks; b++) ids.push(q + b);
    return ids;
  };
  const prompts = Array.from({ length: o.groups * o.promptsPerGroup }, (_, i) =>
    prompt(Math.floor(i / o.promptsPerGroup), i % o.promptsPerGroup),
  );
  const out: TraceRequest[] = [];
  let stageStart = 0;
  for (const s of o.stages) {
    const end = stageStart + s.durationS * 1000;
    let t = stageStart;
    for (;;) {
      t += -Math.log(1 - rng.next()) * (1000 / s.rate);
      if (t >= end) break;
      out.push({
        atMs: Math.round(t),
        inputLength: o.systemLen + o.questionLen,
        outputLength: o.outputLen,
        hashIds: prompts[rng.int(prompts.length)]!,
      });
    }
    stageStart = end;
  }
  return out;
}
