import { DEFAULT_ENGINE_PARAMS } from '../sim/index.js';
import type { WorkloadOptions } from '../workload/index.js';

/** The simulated fleet a comparison runs on: what `routerctl sim` is started with. */
export interface FleetShape {
  workers: number;
  maxRunning: number;
  speedup: number;
  kvBlocks: number;
  flavor: 'sglang' | 'vllm';
  seed: number;
  /** The model's context length (`routerctl sim --context-length`); the simulator's 131,072 when unset. */
  contextLength?: number | undefined;
}

/** The uncached prompt tokens a request is assumed to prefill when its prefix is mostly cached. */
export const ASSUMED_UNCACHED_TOKENS = 500;

/**
 * Requests/s the fleet completes when every running slot is busy: each request holds
 * a slot for its mean output length in decode steps (β0 + β2·maxRunning each, shared
 * by the batch) and adds the prefill of ASSUMED_UNCACHED_TOKENS. So it is the
 * capacity of a fleet that routes for the cache; one that prefills whole prompts
 * (round robin) has less, which is the point of the comparison.
 */
export function fleetCapacity(
  shape: FleetShape,
  workload: Pick<WorkloadOptions, 'outputMedianTokens' | 'outputSigma' | 'outputMaxTokens'>,
): number {
  const p = DEFAULT_ENGINE_PARAMS;
  const r = shape.maxRunning;
  const meanOutput = Math.min(
    workload.outputMaxTokens,
    workload.outputMedianTokens * Math.exp((workload.outputSigma * workload.outputSigma) / 2),
  );
  const engineMsPerRequest = (meanOutput * (p.beta0Ms + p.beta2Ms * r)) / r + p.beta1Ms * ASSUMED_UNCACHED_TOKENS;
  return (shape.workers * shape.speedup * 1000) / engineMsPerRequest;
}

/**
 * The base (between-bursts) arrival rate that loads the fleet to `utilisation` on
 * average over a burst cycle; inside a burst the load is burstFactor times that.
 */
export function rateForLoad(capacity: number, meanOverBase: number, utilisation: number): number {
  return Math.round(((utilisation * capacity) / meanOverBase) * 10) / 10;
}
