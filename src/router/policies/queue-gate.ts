/**
 * The worker queue gate (docs/routing.md §Queue gate), built once from the config and
 * held by every reader in the router: the load table's pool counters, the policy, the
 * booker, the decision recorder, the event watcher and the admin documents. It reads
 * only engine-reported queues: router-local in-flight counts cannot tell running
 * requests from waiting ones, so they are never substituted. The fixed rule is the
 * contract's (contract/queue-rule.ts), which the console applies too.
 *
 * Three modes (docs/routing.md §Gate modes): `fixed`, the reference's waiting count at
 * or over --worker-queue-limit; `auto`, a limit that follows the pool's mean waiting
 * count, so that an evenly loaded fleet keeps its affinity and only an owner queueing
 * well beyond the rest is left; `tokens`, llm-d's τ, queued prompt tokens at or over
 * --queue-gate-tokens; `slo`, an owner whose predicted TTFT for this request misses
 * --ttft-slo-ms while another engine's would not, a verdict per request that the cache
 * ladder makes (resolve-cache-candidates.ts), so that here it queues no one. The three
 * are experimental, and the decision labels keep their meaning in each: queued is "at
 * or over the rule in force now".
 */
import type { QueueGateMode, RouterConfig } from '../../config/index.js';
import { isQueued } from '../../contract/index.js';
import type { LoadView, PolicyWorker, PoolState } from './types.js';

/**
 * The auto limit's lowest value, unless --worker-queue-limit sets another: the lowest
 * fixed limit that cost no goodput on any workload measured (limits 2 and 4 lost it
 * near capacity on the conversation trace and on b2b-saas through partial diversions;
 * docs/routing.md §Why a fixed limit hurts, §Gate modes).
 */
export const AUTO_LIMIT_MIN = 6;
/** How many times the pool's mean waiting count an owner must hold before auto leaves it. */
export const AUTO_MEAN_FACTOR = 2;

export interface QueueGate {
  readonly mode: QueueGateMode;
  /** Some rule is configured: fixed with a limit, auto, or tokens. */
  readonly on: boolean;
  /**
   * The waiting count at or over which a worker is queued, in force now: --worker-queue-limit
   * (fixed), what the pool's queues set (auto); null in tokens mode and with the gate off.
   */
  readonly limit: number | null;
  /** --queue-gate-tokens: queued prompt tokens at or over which a worker is queued (tokens mode); otherwise null. */
  readonly tokenLimit: number | null;
  /** --saturation-queue-floor: enables the saturation pin (docs/routing.md §Saturation pin). null: no floor. */
  readonly floor: number | null;
  /** --ttft-slo-ms under the slo mode: the predicted TTFT over which an owner leaves the candidates; otherwise null. */
  readonly sloMs: number | null;
  /**
   * A fresh engine sample is at or over the rule in force: `waiting` requests, and
   * `queuedTokens` (the engine's waiting uncached prompt tokens) where it reports them;
   * a tokens gate without them admits (fail open). Never with the gate off.
   */
  isQueued(waiting: number, queuedTokens: number | undefined): boolean;
  /**
   * The worker passes the gate: under the rule (a worker already holding `limit`
   * waiting requests is making requests wait). No fresh sample admits (fail open):
   * unknown is not full.
   */
  admits(load: LoadView, worker: PolicyWorker): boolean;
  /**
   * Every pool worker has a fresh sample at or over the rule. O(1) from the pool's
   * maintained counters; one unsampled worker makes it false because it is not counted
   * in `queued`.
   */
  allQueued(pool: PoolState): boolean;
  /**
   * The gate is configured but blind: the pool has workers and none has a fresh sample,
   * so it admits everyone (docs/routing.md §Gate-inert warning). O(1) from the pool's counters.
   */
  inert(pool: PoolState): boolean;
  /**
   * Auto mode: take the pool's summed waiting count over its `sampled` fresh workers and
   * set the limit from their mean; true when the limit changed, so that the caller
   * recounts who is queued. The other modes have nothing to follow (false).
   */
  follow(waitingSum: number, sampled: number): boolean;
  /** The rule in force, for an operator: `waiting ≥ 6`, `waiting ≥ 4 (auto: …)`, `queued prompt tokens ≥ 286,720`; null when off. */
  rule(): string | null;
}

type GateConfig = Pick<RouterConfig, 'workerQueueLimit' | 'saturationQueueFloor'> &
  Partial<Pick<RouterConfig, 'queueGate' | 'queueGateTokens' | 'ttftSloMs'>>;

/** The gate as the config sets it; the config was validated (the floor needs the limit and stays at or under it). */
export function queueGate(config: GateConfig): QueueGate {
  const mode = config.queueGate ?? 'fixed';
  if (mode === 'auto') return autoGate(config.workerQueueLimit ?? AUTO_LIMIT_MIN);
  if (mode === 'tokens') return tokensGate(config.queueGateTokens ?? null);
  if (mode === 'slo') return sloGate(config.ttftSloMs ?? null);
  return fixedGate(config.workerQueueLimit, config.saturationQueueFloor);
}

function fixedGate(limit: number | null, floor: number | null): QueueGate {
  const rule = limit === null ? null : `waiting ≥ ${limit}`;
  return Object.freeze({
    mode: 'fixed' as const,
    on: limit !== null,
    limit,
    tokenLimit: null,
    floor,
    sloMs: null,
    isQueued: (waiting: number) => isQueued(waiting, limit),
    admits: (load: LoadView, worker: PolicyWorker) => {
      if (limit === null) return true;
      const basic = load.basic(worker);
      return basic === undefined || !isQueued(basic.waiting, limit);
    },
    allQueued: (pool: PoolState) => limit !== null && pool.workers.length > 0 && pool.queued === pool.workers.length,
    inert: (pool: PoolState) => limit !== null && pool.workers.length > 0 && pool.sampled === 0,
    follow: () => false,
    rule: () => rule,
  });
}

/** The auto limit for a pool whose fresh workers hold `mean` waiting requests on average; never below `base`. */
export function autoLimit(base: number, mean: number): number {
  return Math.max(base, Math.ceil(AUTO_MEAN_FACTOR * mean - 1e-9));
}

class AutoGate implements QueueGate {
  readonly mode = 'auto' as const;
  readonly on = true;
  readonly tokenLimit = null;
  readonly floor = null;
  readonly sloMs = null;
  limit: number;
  private mean = 0;
  private described: string | undefined;
  private describedMean = 0;

  constructor(private readonly base: number) {
    this.limit = base;
  }

  isQueued(waiting: number): boolean {
    return isQueued(waiting, this.limit);
  }

  admits(load: LoadView, worker: PolicyWorker): boolean {
    const basic = load.basic(worker);
    return basic === undefined || !isQueued(basic.waiting, this.limit);
  }

  allQueued(pool: PoolState): boolean {
    return pool.workers.length > 0 && pool.queued === pool.workers.length;
  }

  inert(pool: PoolState): boolean {
    return pool.workers.length > 0 && pool.sampled === 0;
  }

  follow(waitingSum: number, sampled: number): boolean {
    this.mean = sampled > 0 ? waitingSum / sampled : 0;
    const limit = autoLimit(this.base, this.mean);
    if (limit === this.limit) return false;
    this.limit = limit;
    this.described = undefined;
    return true;
  }

  /** Made again only when the limit or the mean as shown moves: a decision record takes it for every request. */
  rule(): string {
    const shown = Math.round(this.mean * 10);
    if (this.described === undefined || shown !== this.describedMean) {
      this.describedMean = shown;
      this.described = `waiting ≥ ${this.limit} (auto: the larger of ${this.base} and ${AUTO_MEAN_FACTOR} × the pool's mean waiting, ${(shown / 10).toFixed(1)})`;
    }
    return this.described;
  }
}

function autoGate(base: number): QueueGate {
  return new AutoGate(base);
}

function tokensGate(tokenLimit: number | null): QueueGate {
  const on = tokenLimit !== null;
  const queued = (tokens: number | undefined): boolean => on && tokens !== undefined && tokens >= tokenLimit;
  const rule = on ? `queued prompt tokens ≥ ${tokenLimit.toLocaleString('en')}` : null;
  return Object.freeze({
    mode: 'tokens' as const,
    on,
    limit: null,
    tokenLimit,
    floor: null,
    sloMs: null,
    isQueued: (_waiting: number, queuedTokens: number | undefined) => queued(queuedTokens),
    admits: (load: LoadView, worker: PolicyWorker) => !queued(load.basic(worker)?.queuedTokens),
    allQueued: (pool: PoolState) => on && pool.workers.length > 0 && pool.queued === pool.workers.length,
    inert: (pool: PoolState) => on && pool.workers.length > 0 && pool.sampled === 0,
    follow: () => false,
    rule: () => rule,
  });
}

/**
 * The slo mode: no engine is queued by a standing rule, because whether an owner should be
 * left depends on this request's uncached tokens and on what another engine would do with
 * it; the cache ladder asks each candidate's prediction against `sloMs`. So the pool's
 * counters count no one queued, the fallback samples the whole pool, and the gate is never
 * inert (an engine not yet learnt predicts nothing and keeps its affinity).
 */
function sloGate(sloMs: number | null): QueueGate {
  const rule = sloMs === null ? null : `predicted TTFT > ${sloMs.toLocaleString('en')} ms while another engine's is not`;
  return Object.freeze({
    mode: 'slo' as const,
    on: sloMs !== null,
    limit: null,
    tokenLimit: null,
    floor: null,
    sloMs,
    isQueued: () => false,
    admits: () => true,
    allQueued: () => false,
    inert: () => false,
    follow: () => false,
    rule: () => rule,
  });
}

/** No limit and no floor: everyone is admitted, nothing is queued. */
export const NO_QUEUE_GATE: QueueGate = queueGate({ workerQueueLimit: null, saturationQueueFloor: null });
