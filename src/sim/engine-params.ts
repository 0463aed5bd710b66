import type { Flavor } from './http/responses.js';

/** SGLang's --schedule-policy values the simulator models (docs/simulator.md §Waiting-queue order). */
export type SchedulePolicy = 'fcfs' | 'lpm';
export const SCHEDULE_POLICIES: readonly SchedulePolicy[] = ['fcfs', 'lpm'];

/**
 * Engine model parameters. Step-time coefficients are BLIS's fit for Llama-3.1-8B on
 * one H100 under vLLM 0.8.4 (β0 5.75 ms, β1 17.25 µs per uncached prefill token,
 * β2 6 µs per decode token; α0 232 µs + α1 1.75 µs per input token of arrival
 * overhead). Capacity defaults are demo-sized, so queues and evictions show up at
 * modest request rates; pass larger values to model a production engine.
 *
 * Scheduler fields carry the engines' own flag names. Each flavour reads only its
 * own group; the other group is inert (docs/simulator.md §Admission per flavour).
 */
export interface EngineParams {
  /** Running-batch cap (SGLang max_running_requests / vLLM max_num_seqs). */
  maxRunning: number;
  /** SGLang flavour: waiting-queue cap; a request beyond it is refused with 429. */
  maxQueued: number;
  /**
   * vLLM flavour: `--max-num-queued-reqs`, a cap on unfinished requests (waiting and
   * running) past which vLLM refuses with 503; null, vLLM's default, for none.
   */
  maxNumQueuedReqs: number | null;

  /** SGLang max_prefill_tokens: input-token budget of one new prefill batch. */
  maxPrefillTokens: number;
  /** SGLang chunked_prefill_size: tokens of prompt computed per step; -1 turns chunking off. */
  chunkedPrefillSize: number;
  /** SGLang schedule_policy: order in which waiting requests are offered to the prefill batch. */
  schedulePolicy: SchedulePolicy;

  /** vLLM max_num_batched_tokens: tokens scheduled per step, decodes and prefill chunks together. */
  maxNumBatchedTokens: number;
  /** vLLM long_prefill_token_threshold: cap on one request's prefill chunk per step; 0 = no cap. */
  longPrefillTokenThreshold: number;

  /** KV pool size in blocks. */
  kvBlocks: number;
  /** Tokens per KV block (page). */
  blockSize: number;
  /**
   * The model's context length (SGLang --context-length, vLLM --max-model-len): the
   * longest prompt + output accepted. Defaults to the simulated model's 131,072.
   */
  maxModelLen: number;
  beta0Ms: number;
  beta1Ms: number;
  beta2Ms: number;
  alpha0Ms: number;
  alpha1Ms: number;
  /** Divides every duration: 10 runs the engine ten times faster than real time. */
  speedup: number;
  /** Median and lognormal shape of the sampled output length when EOS is honoured. */
  outputMedianTokens: number;
  outputSigma: number;
}

/** SGLang's ServerArgs defaults for the scheduler fields (docs/simulator.md §Parameters). */
export const SGLANG_SCHEDULER_DEFAULTS = Object.freeze({
  maxPrefillTokens: 16384,
  chunkedPrefillSize: 8192,
  schedulePolicy: 'fcfs' as SchedulePolicy,
});

/** vLLM's defaults on an H100-class GPU for the scheduler fields (docs/simulator.md §Parameters). */
export const VLLM_SCHEDULER_DEFAULTS = Object.freeze({
  maxNumBatchedTokens: 8192,
  longPrefillTokenThreshold: 0,
});

export const DEFAULT_ENGINE_PARAMS: Readonly<EngineParams> = Object.freeze({
  maxRunning: 32,
  maxQueued: 1000,
  maxNumQueuedReqs: null,
  ...SGLANG_SCHEDULER_DEFAULTS,
  ...VLLM_SCHEDULER_DEFAULTS,
  kvBlocks: 8192,
  blockSize: 16,
  maxModelLen: 131072,
  beta0Ms: 5.7527,
  beta1Ms: 0.01725,
  beta2Ms: 0.006,
  alpha0Ms: 0.232,
  alpha1Ms: 0.00175,
  speedup: 1,
  outputMedianTokens: 200,
  outputSigma: 0.6,
});

/**
 * A parameter set the engine cannot run with, as a sentence, or undefined. A chunk
 * smaller than one page could never be cut, so a long prompt would wait forever;
 * budgets below one token would never schedule anything.
 */
export function invalidEngineParams(p: Readonly<EngineParams>, flavor: Flavor): string | undefined {
  const whole = (v: number, min: number): boolean => Number.isInteger(v) && v >= min;
  if (!whole(p.maxRunning, 1)) return `maxRunning must be a whole number of at least 1 (got ${p.maxRunning})`;
  if (!whole(p.blockSize, 1)) return `blockSize must be a whole number of at least 1 (got ${p.blockSize})`;
  if (!whole(p.kvBlocks, 1)) return `kvBlocks must be a whole number of at least 1 (got ${p.kvBlocks})`;
  if (flavor === 'sglang') {
    if (!whole(p.maxPrefillTokens, 1)) return `maxPrefillTokens must be a whole number of at least 1 (got ${p.maxPrefillTokens})`;
    if (p.chunkedPrefillSize !== -1 && !whole(p.chunkedPrefillSize, p.blockSize)) {
      return `chunkedPrefillSize must be -1 (off) or a whole number of at least the block size ${p.blockSize} (got ${p.chunkedPrefillSize})`;
    }
    if (!SCHEDULE_POLICIES.includes(p.schedulePolicy))
      return `schedulePolicy must be one of ${SCHEDULE_POLICIES.join(', ')} (got ${String(p.schedulePolicy)})`;
  } else {
    if (!whole(p.maxNumBatchedTokens, 1)) return `maxNumBatchedTokens must be a whole number of at least 1 (got ${p.maxNumBatchedTokens})`;
    if (p.maxNumQueuedReqs !== null && !whole(p.maxNumQueuedReqs, 0))
      return `maxNumQueuedReqs must be null or a whole number of at least 0 (got ${p.maxNumQueuedReqs})`;
    if (!whole(p.longPrefillTokenThreshold, 0)) {
      return `longPrefillTokenThreshold must be a whole number of at least 0 (got ${p.longPrefillTokenThreshold})`;
    }
  }
  return undefined;
}
