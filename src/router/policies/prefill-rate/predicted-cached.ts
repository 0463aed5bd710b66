/**
 * The prompt tokens the router expects an engine to find in its prefix cache, from the
 * blocks its index matched there: whole blocks when requests are keyed by engine tokens
 * (`tokenBlockSize`; the engine always computes the prompt's last token), else the
 * matched share of the prompt's tokens. The decision record's prediction
 * (`sgl_router_cache_prediction_error_tokens`) and the prefill estimator's tokens both.
 */
/** The prefix index's answer for a request, as far as a prediction reads it (PrefixSignal, structurally). */
export interface MatchedPrefix {
  readonly queryBlocks: number;
  readonly matches: ReadonlyArray<{ readonly worker: object; readonly blocks: number }>;
}

/** The prompt tokens `worker` is expected to compute for a request: all but those the index says it holds. */
export function predictedUncachedTokens(
  inputTokens: number,
  signal: MatchedPrefix | undefined,
  worker: object,
  tokenBlockSize: number | null,
): number {
  let matched = 0;
  if (signal !== undefined)
    for (const m of signal.matches)
      if (m.worker === worker) {
        matched = m.blocks;
        break;
      }
  return inputTokens - predictedCachedTokens(inputTokens, matched, signal?.queryBlocks ?? 0, tokenBlockSize);
}

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
