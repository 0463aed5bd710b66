/**
 * Engine model parameters. Step-time coefficients are BLIS's fit for Llama-3.1-8B on
 * one H100 under vLLM 0.8.4 (β0 5.75 ms, β1 17.25 µs per uncached prefill token,
 * β2 6 µs per decode token; α0 232 µs + α1 1.75 µs per input token of arrival
 * overhead). Capacity defaults are demo-sized, so queues and evictions show up at
 * modest request rates; pass larger values to model a production engine.
 */
export interface EngineParams {
  /** Running-batch cap (max_running_requests / max-num-seqs). */
  maxRunning: number;
  /** Waiting-queue cap; a request beyond it is refused with 429. */
  maxQueued: number;
  /** Chunked-prefill token budget per step, decode tokens included. */
  maxBatchedTokens: number;
  /** KV pool size in blocks. */
  kvBlocks: number;
  /** Tokens per KV block (page). */
  blockSize: number;
  /** Longest prompt + output accepted. */
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

export const DEFAULT_ENGINE_PARAMS: Readonly<EngineParams> = Object.freeze({
  maxRunning: 32,
  maxQueued: 1000,
  maxBatchedTokens: 8192,
  kvBlocks: 8192,
  blockSize: 16,
  maxModelLen: 32768,
  beta0Ms: 5.7527,
  beta1Ms: 0.01725,
  beta2Ms: 0.006,
  alpha0Ms: 0.232,
  alpha1Ms: 0.00175,
  speedup: 1,
  outputMedianTokens: 200,
  outputSigma: 0.6,
});

/** SGLang's TTFT histogram buckets, in seconds. */
export const TTFT_BUCKETS_S: readonly number[] = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15, 20, 25, 30, 40, 50, 60,
];
