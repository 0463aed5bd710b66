/**
 * The prompt tokens the router expects an engine to find in its prefix cache, from the
 * blocks its index matched there: whole blocks when requests are keyed by engine tokens
 * (`tokenBlockSize`; the engine always computes the prompt's last token), else the
 * matched share of the prompt's tokens. The decision record's prediction
 * (`sgl_router_cache_prediction_error_tokens`) and the prefill estimator's tokens both.
 */
export function predictedCachedTokens(
  inputTokens: number,
  matchedBlocks: number,
  queryBlocks: number,
  tokenBlockSize: number | null,
): number {
  if (queryBlocks === 0 || matchedBlocks === 0) return 0;
  return tokenBlockSize !== null
    ? Math.min(matchedBlocks, Math.floor((inputTokens - 1) / tokenBlockSize)) * tokenBlockSize
    : Math.round((inputTokens * matchedBlocks) / queryBlocks);
}
