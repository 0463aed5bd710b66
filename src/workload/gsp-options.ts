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
