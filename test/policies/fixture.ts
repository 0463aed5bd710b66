/**
 * Test fixtures following the reference tests' conventions
 * (docs/routing.md §Fixture conventions): url `http://{id}:30000`, waiting-uncached =
 * waiting, total = used, max_running_requests = 64, no estimate unless given, 100
 * input tokens.
 * Pool counters are computed here by a plain scan, as the load table would
 * maintain them incrementally.
 */
import type { CacheCandidate, CacheCandidateProposal } from '../../src/router/policies/cache-aware/candidates.js';
import { cacheAwareConfig, type CacheAwareConfig } from '../../src/router/policies/cache-aware/config.js';
import type { PairProposal } from '../../src/router/policies/cache-aware/pair-proposal.js';
import { GUARD_OFF, type PressureGuard } from '../../src/router/policies/cache-aware/pressure.js';
import type { SchedulingNativeLoad } from '../../src/router/policies/cache-aware/pressure.js';
import { queueGate, type QueueGate } from '../../src/router/policies/queue-gate.js';
import type {
  BasicLoad,
  LoadView,
  NativeLoad,
  PolicyWorker,
  PoolState,
  PrefixSignal,
  SelectionContext,
  SelectionOutcome,
} from '../../src/router/policies/types.js';

export const INPUT_TOKENS = 100;
export const MAX_RUNNING = 64;

let nextSlot = 0;

export interface TestWorker extends PolicyWorker {
  inflight: number;
}

export function worker(id: string, inflight = 0): TestWorker {
  return { id: `http://${id}:30000`, slot: nextSlot++, inflight };
}

export interface RowExtras {
  /** Defaults to waiting. */
  readonly waitingUncached?: number;
  readonly estimateMs?: number;
  /** An old 4-count frame: feeds the gate, not capacity admission or pressure. */
  readonly basicOnly?: boolean;
  /**
   * The engine schedules fcfs (not cache-aware): its capacity fields feed admission,
   * but its waiting-uncached tokens are raw lengths the pressure comparisons ignore.
   */
  readonly fcfs?: boolean;
}

/** (worker, running, waiting, used, capacity[, extras]) */
export type Row = readonly [PolicyWorker, number, number, number, number, RowExtras?];

export class TableLoad implements LoadView {
  readonly version: number;
  readonly #basic = new Map<string, BasicLoad>();
  readonly #native = new Map<string, NativeLoad>();

  constructor(rows: readonly Row[], version = 1) {
    this.version = version;
    for (const [w, running, waiting, used, capacity, extras] of rows) {
      // Native data needs a known capacity (docs/routing.md §Fresh load); an engine with it reports its queued tokens too.
      const hasNative = extras?.basicOnly !== true && capacity > 0;
      const queuedTokens = hasNative ? (extras?.waitingUncached ?? waiting) : undefined;
      const basic: BasicLoad = { running, waiting, usedTokens: used, maxTotalTokens: capacity, capturedAt: 0, queuedTokens };
      this.#basic.set(w.id, basic);
      if (hasNative) {
        const native: SchedulingNativeLoad = {
          ...basic,
          waitingUncachedTokens: extras?.waitingUncached ?? waiting,
          totalTokens: used,
          maxRunningRequests: MAX_RUNNING,
          estimatedPrefillQueueMs: extras?.estimateMs,
          ...(extras?.fcfs === true ? { uncachedTokensComparable: false } : {}),
        };
        this.#native.set(w.id, native);
      }
    }
  }

  basic(w: PolicyWorker): BasicLoad | undefined {
    return this.#basic.get(w.id);
  }

  native(w: PolicyWorker): NativeLoad | undefined {
    return this.#native.get(w.id);
  }
}

export function snapshot(rows: readonly Row[], version = 1): TableLoad {
  return new TableLoad(rows, version);
}

export const EMPTY_LOAD: LoadView = snapshot([]);

export interface GateSettings {
  /** null or absent: no limit. */
  readonly limit?: number | null;
  /** null or absent: no floor. */
  readonly floor?: number | null;
}

export function poolOf(workers: readonly PolicyWorker[], load: LoadView, gate: GateSettings = {}): PoolState {
  const limit = gate.limit ?? null;
  const floor = gate.floor ?? null;
  let sampled = 0;
  let queued = 0;
  let belowFloor = 0;
  const unqueued: PolicyWorker[] = [];
  for (const w of workers) {
    const b = load.basic(w);
    if (b !== undefined) {
      sampled += 1;
      if (limit !== null && b.waiting >= limit) queued += 1;
      if (floor !== null && b.waiting < floor) belowFloor += 1;
    }
    if (limit === null || b === undefined || b.waiting < limit) unqueued.push(w);
  }
  return { workers, sampled, queued, belowFloor, unqueued };
}

/** candidate(worker, uncached, blocks): matched = 100 − uncached. */
export function candidate(w: PolicyWorker, uncached: number, blocks: number): CacheCandidate {
  return { worker: w, matchedPrefixTokens: INPUT_TOKENS - uncached, uncachedTokens: uncached, matchedPrefixBlocks: blocks };
}

/** The gate settings as the schema names them; the tables below are written with them. */
export interface GateSettings {
  readonly workerQueueLimit?: number | null | undefined;
  readonly saturationQueueFloor?: number | null | undefined;
}

/** The router's queue gate at a limit and floor (absent or null: none), as it is built from the config. */
export function gateAt(limit?: number | null, floor?: number | null): QueueGate {
  return queueGate({ workerQueueLimit: limit ?? null, saturationQueueFloor: floor ?? null });
}

/** A cache-aware config from the schema's settings, the gate built from its two. */
export function policyConfig(settings: Partial<CacheAwareConfig> & GateSettings = {}): CacheAwareConfig {
  const { workerQueueLimit, saturationQueueFloor, ...rest } = settings;
  return cacheAwareConfig({ gate: gateAt(workerQueueLimit, saturationQueueFloor), ...rest });
}

/** The reference proposal Default: margin 0, guard off, no limit, no floor. */
export function proposal(
  candidates: readonly CacheCandidate[],
  overrides: Partial<Omit<CacheCandidateProposal, 'candidates'>> & GateSettings = {},
): CacheCandidateProposal {
  const { workerQueueLimit, saturationQueueFloor, ...rest } = overrides;
  return {
    candidates,
    switchMarginTokens: 0,
    guard: GUARD_OFF,
    capacity: 'reference',
    gate: gateAt(workerQueueLimit, saturationQueueFloor),
    ...rest,
  };
}

/**
 * An outcome as one flat record, the shape the tables here are written in: the
 * cache-aware audit's fields beside ok, worker and reason, its resolution as `audit`.
 */
export function flat(o: SelectionOutcome): Record<string, unknown> {
  const { cacheAware, ...rest } = o;
  if (cacheAware === undefined) return rest;
  const { resolution, ...audit } = cacheAware;
  return { ...rest, ...audit, ...(resolution !== undefined ? { audit: resolution } : {}) };
}

export function pair(primary: PolicyWorker, backup?: PolicyWorker, guard: PressureGuard = GUARD_OFF): PairProposal {
  return { primary, backup, guard };
}

export function signal(queryBlocks: number, matches: ReadonlyArray<readonly [PolicyWorker, number]>): PrefixSignal {
  return { queryBlocks, matches: matches.map(([w, blocks]) => ({ worker: w, blocks })) };
}

/** mulberry32: small, seeded, uniform in [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random source that replays `values` (then repeats the last one). */
export function scripted(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)] ?? 0;
}

export interface ContextInit {
  readonly workers: readonly PolicyWorker[];
  readonly load?: LoadView;
  readonly gate?: GateSettings;
  readonly inputTokens?: number;
  readonly prefix?: PrefixSignal;
  readonly random?: () => number;
}

export function context(init: ContextInit): SelectionContext {
  const load = init.load ?? EMPTY_LOAD;
  return {
    pool: poolOf(init.workers, load, init.gate),
    load,
    inputTokens: init.inputTokens ?? INPUT_TOKENS,
    prefix: init.prefix,
    random: init.random ?? seeded(1),
  };
}
