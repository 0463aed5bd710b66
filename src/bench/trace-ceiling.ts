import { countOverContext, fleetKvTraceBlocks, sharedLruReference, traceCacheCeiling } from '../workload/index.js';
import type { TraceRequest } from '../workload/index.js';

/** What the replayed slice allows before any routing, as a trace report states it (docs/bench.md §Trace report). */
export interface TraceBounds {
  /** The infinite-cache ceiling: prefix-consistent, token-weighted as the engines count a hit. */
  ceiling: {
    input_tokens: number;
    cached_tokens: number;
    cached_token_share: number;
    block_references: number;
    repeated_references: number;
    repeated_reference_share: number;
  };
  /** A reference point, not a ceiling: the fleet's total KV as one shared LRU cache. */
  shared_lru: { capacity_blocks: number; cached_tokens: number; cached_token_share: number };
  /** Requests the engines refuse for length before they start, at the configured context. */
  over_context: number;
  context_length: number;
  requests: number;
}

export interface TraceBoundsFleet {
  workers: number;
  kvBlocks: number;
  /** Tokens per engine KV block: hits are whole engine blocks. */
  engineBlockSize: number;
  contextLength: number;
}

const share = (v: number): number => Math.round(v * 10_000) / 10_000;

/** The ceiling, the shared-LRU reference point and the requests over the context, of one trace on one fleet. */
export function traceBounds(trace: readonly TraceRequest[], traceBlockSize: number, fleet: TraceBoundsFleet): TraceBounds {
  const counting = { traceBlockSize, engineBlockSize: fleet.engineBlockSize };
  const c = traceCacheCeiling(trace, counting);
  const capacityBlocks = fleetKvTraceBlocks(
    { workers: fleet.workers, kvBlocks: fleet.kvBlocks, blockSize: fleet.engineBlockSize },
    traceBlockSize,
  );
  const lru = sharedLruReference(trace, { ...counting, capacityBlocks });
  return {
    ceiling: {
      input_tokens: c.inputTokens,
      cached_tokens: c.cachedTokens,
      cached_token_share: share(c.cachedTokenShare),
      block_references: c.blockReferences,
      repeated_references: c.repeatedReferences,
      repeated_reference_share: share(c.repeatedReferenceShare),
    },
    shared_lru: { capacity_blocks: lru.capacityBlocks, cached_tokens: lru.cachedTokens, cached_token_share: share(lru.cachedTokenShare) },
    over_context: countOverContext(trace, fleet.contextLength),
    context_length: fleet.contextLength,
    requests: trace.length,
  };
}

/** An arm's cached tokens as a share of the ceiling's; null when the ceiling is zero (nothing could be cached). */
export function ceilingShare(cachedTokens: number, bounds: TraceBounds): number | null {
  return bounds.ceiling.cached_tokens > 0 ? share(cachedTokens / bounds.ceiling.cached_tokens) : null;
}

/** The lines a text report states the bounds in, under its header. */
export function boundsLines(b: TraceBounds): string[] {
  const pct = (v: number): string => `${(100 * v).toFixed(1)}%`;
  return [
    `ceiling (an infinite prefix cache): ${pct(b.ceiling.cached_token_share)} of prompt tokens cached; ` +
      `${pct(b.ceiling.repeated_reference_share)} of block references repeat`,
    `reference point, not a ceiling: the fleet's KV as one shared LRU cache (${b.shared_lru.capacity_blocks} trace blocks) caches ` +
      `${pct(b.shared_lru.cached_token_share)}`,
    overContextLine(b),
  ];
}

/** How many requests the engines will refuse for length: what a trace run says before it starts. */
export function overContextLine(b: TraceBounds): string {
  const n = b.over_context;
  return `${n} of ${b.requests} request${b.requests === 1 ? '' : 's'} exceed${n === 1 ? 's' : ''} the context length of ${b.context_length} tokens${n > 0 ? ' (the engines refuse them)' : ''}`;
}
