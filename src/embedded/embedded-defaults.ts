import { DEFAULT_ENGINE_PARAMS } from '../sim/index.js';
import type { EngineParams } from '../sim/index.js';
import { DEFAULT_WORKLOAD } from '../workload/index.js';

/**
 * The embedded default fleet: small engines (4 running requests each, half real
 * speed) so that a laptop can drive them near saturation, a hot-prefix chat
 * workload, and a request rate derived from the model rather than guessed.
 */
export const EMBEDDED_ENGINE: Partial<EngineParams> = { maxRunning: 4, speedup: 0.5, kvBlocks: 8192 };

export const EMBEDDED_WORKLOAD = { ...DEFAULT_WORKLOAD, outputMedianTokens: 48, outputMaxTokens: 96, sessions: 48 };

/**
 * Requests/s that load the fleet to `utilisation` on average, bursts included: each engine serves
 * maxRunning requests at a time, each taking ~median output × decode step plus a
 * partly cached prefill. Bursts (×3 for 3 s every 15 s) then push owners of hot
 * prefixes past a queue limit of 6.
 */
export function autoRate(workers: number, utilisation = 0.9): number {
  const p = { ...DEFAULT_ENGINE_PARAMS, ...EMBEDDED_ENGINE };
  const decodeStepMs = p.beta0Ms + p.beta2Ms * p.maxRunning;
  const prefillMs = p.beta0Ms + p.beta1Ms * 500; // the uncached tail of a mostly cached prompt
  // Lognormal(σ = 0.5) output lengths average e^(σ²/2) ≈ 1.13 × the median.
  const meanOutput = EMBEDDED_WORKLOAD.outputMedianTokens * Math.exp(0.125);
  const serviceS = (meanOutput * decodeStepMs + prefillMs) / p.speedup / 1000;
  // Bursts raise the average arrival rate by this factor over a burst cycle.
  const w = EMBEDDED_WORKLOAD;
  const burstAverage = 1 + ((w.burstFactor - 1) * w.burstSeconds) / w.burstEverySeconds;
  return Math.round(((utilisation * workers * p.maxRunning) / serviceS / burstAverage) * 10) / 10;
}
