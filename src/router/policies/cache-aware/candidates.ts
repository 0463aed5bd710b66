/**
 * Turning a prefix signal into bounded cache candidates (docs/routing.md §Candidates).
 */
import type { CapacityAdmissionMode } from '../../../config/index.js';
import type { QueueGate } from '../queue-gate.js';
import type { LoadView, PolicyWorker, PoolState, PrefixSignal } from '../types.js';
import type { CacheAwareConfig } from './config.js';
import { compareIds, compareNumbers, comparePressure, lookupOver, type PressureGuard, type PressureLookup } from './pressure.js';

export interface CacheCandidate {
  readonly worker: PolicyWorker;
  readonly matchedPrefixTokens: number;
  readonly uncachedTokens: number;
  /** Capped at the query's block count; also the depth the diversion histogram reports. */
  readonly matchedPrefixBlocks: number;
}

/** What resolve_cache_candidates needs; mirrors the reference's CacheCandidateProposal. */
export interface CacheCandidateProposal {
  /** In seed order: deepest match first. */
  readonly candidates: readonly CacheCandidate[];
  readonly switchMarginTokens: number;
  readonly guard: PressureGuard;
  readonly gate: QueueGate;
  /** --capacity-admission: the limits hard admission holds each candidate to. */
  readonly capacity: CapacityAdmissionMode;
}

export interface CandidateInputs {
  readonly pool: PoolState;
  readonly load: LoadView;
  readonly inputTokens: number;
  readonly prefix: PrefixSignal | undefined;
  /** A retry's excluded worker: its match is ignored (the pool given is already without it). */
  readonly exclude?: PolicyWorker | undefined;
}

export function guardOf(config: CacheAwareConfig): PressureGuard {
  return Object.freeze({
    enabled: !config.disablePressureGuard,
    absTokens: config.pressureAbsThresholdTokens,
    absMs: config.pressureAbsThresholdMs,
    rel: config.pressureRelThreshold,
  });
}

/**
 * min(pool, max, max(min, ceil(ratio × pool))). The float product is kept as the
 * reference computes it (0.05 × 60 rounds up to 4), so both routers bound alike.
 */
export function candidateLimit(poolSize: number, config: CacheAwareConfig): number {
  return Math.min(
    poolSize,
    config.cacheCandidateMaxWorkers,
    Math.max(config.cacheCandidateMinWorkers, Math.ceil(config.cacheCandidateRatio * poolSize)),
  );
}

/** The cache gate of step 4: a shallow match is not worth steering traffic for. */
export function clearsCacheGate(matchedTokens: number, inputTokens: number, config: CacheAwareConfig): boolean {
  const minTokens = config.cacheAffinityMinMatchedTokens;
  if (minTokens !== undefined && matchedTokens < minTokens) return false;
  const minRatio = config.cacheAffinityMinMatchRatio;
  if (minRatio !== null) {
    if (!(inputTokens > 0)) return false;
    if (matchedTokens / inputTokens < minRatio) return false;
  }
  return true;
}

/**
 * The candidate proposal, or undefined when the request has no usable signal or no
 * candidate clears the cache gate (the caller then proposes a pair: a cache miss).
 *
 * Pool membership of a match is trusted to the router, which only reports matches
 * for pool workers; checking it here would need a pool-sized structure per request.
 * Work is proportional to the matches (each must pass the cache gate, and the
 * ordering mode depends on all of them), and the kept set never exceeds the cap.
 */
export function buildCacheCandidates(
  inputs: CandidateInputs,
  config: CacheAwareConfig,
  guard: PressureGuard = guardOf(config),
): CacheCandidateProposal | undefined {
  const { pool, load, inputTokens, prefix, exclude } = inputs;
  const poolSize = pool.workers.length;
  if (poolSize === 0 || prefix === undefined || !(prefix.queryBlocks > 0) || prefix.matches.length === 0) {
    return undefined;
  }
  if (!Number.isFinite(inputTokens) || inputTokens < 0) return undefined;
  const cap = candidateLimit(poolSize, config);
  if (!(cap > 0)) return undefined;

  const queryBlocks = prefix.queryBlocks;
  const seen = new Set<number>();
  const passing: CacheCandidate[] = [];
  for (const match of prefix.matches) {
    if (!(match.blocks >= 1) || match.worker === exclude) continue;
    const slot = match.worker.slot;
    if (seen.has(slot)) continue;
    seen.add(slot);
    // The cap keeps an untrusted index count from claiming more than the request has.
    const blocks = Math.min(match.blocks, queryBlocks);
    const matched = Math.floor((inputTokens * blocks) / Math.max(queryBlocks, 1));
    if (!clearsCacheGate(matched, inputTokens, config)) continue;
    passing.push({
      worker: match.worker,
      matchedPrefixTokens: matched,
      uncachedTokens: Math.max(0, inputTokens - matched),
      matchedPrefixBlocks: blocks,
    });
  }
  if (passing.length === 0) return undefined;

  // The seed order's pressure mode is decided over every candidate that cleared the cache gate.
  const lookup = lookupOver(load, passing, candidateWorker);
  return {
    candidates: keepBest(passing, cap, lookup),
    switchMarginTokens: config.cacheSwitchMarginTokens,
    guard,
    capacity: config.capacityAdmission,
    gate: config.gate,
  };
}

const candidateWorker = (c: CacheCandidate): PolicyWorker => c.worker;

/** Deepest match first, then least pressured, then id. A total order: lookup mode is set-wide. */
export function compareSeedOrder(lookup: PressureLookup, a: CacheCandidate, b: CacheCandidate): number {
  return (
    compareNumbers(b.matchedPrefixTokens, a.matchedPrefixTokens) ||
    comparePressure(lookup, a.worker, b.worker) ||
    compareIds(a.worker, b.worker)
  );
}

/** The first `cap` in seed order, by bounded insertion rather than sorting every match. */
function keepBest(all: readonly CacheCandidate[], cap: number, lookup: PressureLookup): CacheCandidate[] {
  const kept: CacheCandidate[] = [];
  for (const c of all) {
    if (kept.length === cap) {
      const last = kept[cap - 1] as CacheCandidate;
      if (compareSeedOrder(lookup, c, last) >= 0) continue;
      kept.pop();
    }
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareSeedOrder(lookup, kept[mid] as CacheCandidate, c) <= 0) lo = mid + 1;
      else hi = mid;
    }
    kept.splice(lo, 0, c);
  }
  return kept;
}
