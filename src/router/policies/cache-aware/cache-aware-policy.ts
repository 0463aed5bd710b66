/**
 * The cache-aware selection ladder (docs/routing.md §Selection ladder (cache_aware))
 * as pure logic: it returns what happened and the router books every metric from
 * that, so the booking rules (one decision per selected worker, none per failure)
 * live in one place.
 */
import { PoolWithout } from '../exclusion.js';
import type {
  CacheAwareAudit,
  CacheAwareDecision,
  Policy,
  PolicyWorker,
  SelectionContext,
  SelectionFailure,
  SelectionFailureReason,
  SelectionOutcome,
  SelectionSuccess,
} from '../types.js';
import { buildCacheCandidates, guardOf, type CacheCandidate } from './candidates.js';
import { DEFAULT_CACHE_AWARE_CONFIG, type CacheAwareConfig } from './config.js';
import { cacheAwareFallbackDecision, cacheAwareReasonLabel, cacheWinnerDecision } from './decision.js';
import { InertGateWarning } from './inert-warning.js';
import { proposePair, type PairProposal } from './pair-proposal.js';
import { predictedTtftMs } from '../predicted-ttft.js';
import { capacityFallback, resolvePrefillAdmitted } from './prefill-admission.js';
import type { PressureGuard } from './pressure.js';
import { resolveCacheCandidates, type CacheResolution } from './resolve-cache-candidates.js';

/**
 * What a cache-aware selection returns: the outcome, with its `cacheAware` audit so
 * the router can book the counters the reference records per resolution (cache
 * admission evaluated/rejected, pressure-guard pairs and overrides, cache monitor
 * source). The resolution is present whenever candidates were resolved, on success
 * and on failure.
 */
export type CacheAwareSelection = SelectionOutcome;

const NO_WORKERS: readonly PolicyWorker[] = Object.freeze([]);

function workersOf(candidates: readonly CacheCandidate[]): readonly PolicyWorker[] {
  return candidates.length === 0 ? NO_WORKERS : candidates.map((c) => c.worker);
}

export class CacheAwarePolicy implements Policy {
  readonly name = 'cache_aware' as const;
  readonly usesPrefix = true;
  readonly config: CacheAwareConfig;
  readonly #guard: PressureGuard;
  readonly #inert = new InertGateWarning();
  readonly #without = new PoolWithout();

  constructor(config: CacheAwareConfig = DEFAULT_CACHE_AWARE_CONFIG) {
    this.config = config;
    this.#guard = guardOf(config);
  }

  select(ctx: SelectionContext): CacheAwareSelection {
    const load = ctx.load;
    // A retry selects over the pool without the worker it moves away from; every rung
    // below, candidates included, sees only that pool.
    const gate = this.config.gate;
    const pool = this.#without.over(ctx.pool, load, ctx.exclude, gate.floor);
    const choices = this.config.minLoadChoices;
    let failure: SelectionFailureReason = 'proposal_empty';
    let resolution: CacheResolution | undefined;
    let inertWarning = false;
    // The fallback pair, drawn once: the slo gate asks where the request would go without
    // its owners, and rung 2 then sends it there.
    let pair: PairProposal | undefined | null = null;
    const drawPair = (): PairProposal | undefined => (pair === null ? (pair = proposePair(pool, load, gate, choices, ctx.random)) : pair);
    const elsewhereMs =
      gate.sloMs === null
        ? undefined
        : (): number | null => {
            const p = drawPair();
            return p === undefined ? null : predictedTtftMs(p.primary, ctx.inputTokens, load);
          };

    // Rung 1: cache winner, only when the request yields a candidate proposal.
    const proposal = buildCacheCandidates(pool === ctx.pool ? ctx : { ...ctx, pool }, this.config, this.#guard);
    if (proposal !== undefined) {
      // The sampled warning counts requests: a retry is the same request, and its
      // outcome is not booked, so it neither ticks nor could report the warning.
      inertWarning = ctx.exclude === undefined && this.#inert.tick(gate, pool);
      resolution = resolveCacheCandidates(proposal, ctx.inputTokens, load, pool, elsewhereMs);
      const { decision, winner, audit } = resolution;
      if (decision !== undefined && winner !== undefined) {
        const booked = cacheWinnerDecision(decision.reason, audit.queueGateFellBack);
        return {
          ok: true,
          worker: decision.selected,
          backup: decision.retry,
          reason: cacheAwareReasonLabel(decision.reason, 'cache_candidates'),
          cacheAware: withFlags(
            {
              decision: booked,
              // A shallower owner won because the gate removed a deeper one: still a hit, but visible.
              partialDiversion: booked === 'cache_hit' && audit.queueGateBestRejectedBlocks > winner.matchedPrefixBlocks,
              gateRejected: workersOf(resolution.gateRejected),
              resolution: audit,
            },
            inertWarning,
          ),
        };
      }
      failure = 'cache_candidates_exhausted';
    }

    // Rung 2: the pair fallback over the single global domain.
    const drawn = drawPair();
    if (drawn === undefined) return this.#fail(failure, resolution, inertWarning);
    let decision = resolvePrefillAdmitted(pool.workers, drawn, ctx.inputTokens, load, gate, this.config.capacityAdmission);
    if (decision === undefined) {
      failure = 'prefill_admission_exhausted';
      // Pass 2 (resolve_prefill) would first re-run the strict pass on identical
      // inputs; it is pure and just returned nothing, so go to its capacity fallback.
      decision = capacityFallback(pool.workers, drawn, load, choices, ctx.random);
    }
    if (decision === undefined) return this.#fail(failure, resolution, inertWarning);

    const audit = resolution?.audit;
    const booked: CacheAwareDecision = cacheAwareFallbackDecision(
      audit?.queueGateRejected ?? 0,
      audit?.admissionEvaluated ?? 0,
      audit?.fleetAllQueued ?? false,
    );
    const success: SelectionSuccess = {
      ok: true,
      worker: decision.selected,
      backup: decision.retry,
      reason: cacheAwareReasonLabel(decision.reason, 'pair'),
      cacheAware: withFlags(
        {
          decision: booked,
          // Only a landed diversion is evidence of what the gate cost, and only a full one.
          ...(booked === 'cache_worker_queued' && audit !== undefined ? { divertedOverlapBlocks: audit.queueGateBestRejectedBlocks } : {}),
          ...resolved(resolution),
        },
        inertWarning,
      ),
    };
    return success;
  }

  /** A failed ladder books no decision: it is a 503, counted by the failure reason alone. */
  #fail(reason: SelectionFailureReason, resolution: CacheResolution | undefined, inertWarning: boolean): SelectionFailure {
    const audit = withFlags(resolved(resolution), inertWarning);
    return audit.gateRejected !== undefined || audit.inertWarning !== undefined
      ? { ok: false, reason, cacheAware: audit }
      : { ok: false, reason };
  }
}

/** What a resolution of cache candidates adds to the audit: the gate's rejections and the resolution's counts. */
function resolved(resolution: CacheResolution | undefined): CacheAwareAudit {
  return resolution !== undefined ? { gateRejected: workersOf(resolution.gateRejected), resolution: resolution.audit } : {};
}

function withFlags(audit: CacheAwareAudit, inertWarning: boolean): CacheAwareAudit {
  return inertWarning ? { ...audit, inertWarning: true } : audit;
}
