import type { WorkloadOptions } from '../workload/index.js';

/** The workload as the JSON report states it (snake_case, like every routerctl JSON). */
export function workloadJson(w: WorkloadOptions): Record<string, unknown> {
  return {
    seed: w.seed,
    rate_per_s: w.rate,
    sessions: w.sessions,
    max_turns: w.maxTurns,
    families: w.families,
    zipf_s: w.zipfS,
    system_tokens: [w.systemTokensMin, w.systemTokensMax],
    output_median_tokens: w.outputMedianTokens,
    output_sigma: w.outputSigma,
    output_max_tokens: w.outputMaxTokens,
    burst: { factor: w.burstFactor, seconds: w.burstSeconds, every_s: w.burstEverySeconds },
  };
}
