import type { WorkloadOptions } from '../../src/workload/index.js';

/**
 * The seeded hot-prefix conversations the KV-event benchmarks replay (prediction,
 * replicas, event-gap): 16 system prompts of 500–2,000 tokens at Zipf 1.1,
 * up to 4 turns, short replies. One definition, so their figures describe one workload.
 */
export const HOT_PREFIX_CONVERSATIONS: Readonly<Partial<WorkloadOptions>> = Object.freeze({
  seed: 7,
  families: 16,
  zipfS: 1.1,
  systemTokensMin: 500,
  systemTokensMax: 2000,
  maxTurns: 4,
  sessions: 32,
  outputMedianTokens: 24,
  outputMaxTokens: 48,
});
