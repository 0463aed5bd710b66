/**
 * Prefill pressure comparison (docs/routing.md §Pressure ranking). Two modes exist on
 * purpose:
 *
 * - Lookup mode ranks a known set. Its engine comparison is one all-or-nothing
 *   switch (`compareEngine`) so that the ordering inside the set is total and
 *   sortable; one member without native data drops the whole set to router-local
 *   in-flight counts.
 * - Pairwise mode compares two workers on whatever they both have. It is not
 *   transitive across mixed sets, so callers must scan linearly, never sort.
 */
import type { LoadView, NativeLoad, PolicyWorker } from '../types.js';

export type PrefillPressureSource = 'estimated_prefill_queue_ms' | 'native_queue_tokens' | 'router_local';

export interface PressureThresholds {
  readonly absTokens: number;
  /** When set and both sides have an estimate, the ms rule replaces the token rule. */
  readonly absMs: number | null;
  readonly rel: number;
}

export interface PressureGuard extends PressureThresholds {
  readonly enabled: boolean;
}

/** The Rust proposal Default: guard off, thresholds 0 / None / 0.0. */
export const GUARD_OFF: PressureGuard = Object.freeze({ enabled: false, absTokens: 0, absMs: null, rel: 0 });

export function compareNumbers(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Rust's f64::total_cmp, so that an odd estimate (NaN, ±0) cannot make the order
 * inconsistent. JS cannot observe a NaN's sign; every NaN sorts as positive NaN.
 */
export function totalCmp(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) {
    if (a !== 0) return 0;
    const negA = Object.is(a, -0);
    const negB = Object.is(b, -0);
    return negA === negB ? 0 : negA ? -1 : 1;
  }
  const nanA = Number.isNaN(a);
  const nanB = Number.isNaN(b);
  return nanA && nanB ? 0 : nanA ? 1 : -1;
}

/** Ascending string compare on the URL: the final tie-break wherever candidates are ranked. */
export function compareIds(a: PolicyWorker, b: PolicyWorker): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function compareActiveLoad(a: PolicyWorker, b: PolicyWorker): number {
  return compareNumbers(a.inflight, b.inflight);
}

/** compare_prefill_load: estimated queue time first when both have one, then the queue tuple. */
export function comparePrefillLoad(a: NativeLoad, b: NativeLoad): number {
  const ea = a.estimatedPrefillQueueMs;
  const eb = b.estimatedPrefillQueueMs;
  if (ea !== undefined && eb !== undefined) {
    const c = totalCmp(ea, eb);
    if (c !== 0) return c;
  }
  return (
    compareNumbers(a.waitingUncachedTokens, b.waitingUncachedTokens) ||
    compareNumbers(a.waiting, b.waiting) ||
    compareNumbers(a.running, b.running)
  );
}

/** A FreshLoadLookup reduced to what ranking needs: the view and the set-wide mode. */
export interface PressureLookup {
  readonly load: LoadView;
  readonly compareEngine: boolean;
  readonly source: PrefillPressureSource;
}

export const workerOfSelf = (w: PolicyWorker): PolicyWorker => w;

/**
 * A native aggregate as the load table hands it out. Its capacity fields hold
 * whatever the engine's schedule policy, but its waiting-uncached tokens are net of
 * the prefix cache only under a cache-aware policy; under `fcfs` they are raw prompt
 * lengths and must not be compared (docs/engine-load.md, "Capacity and pressure").
 */
export interface SchedulingNativeLoad extends NativeLoad {
  /** false: the uncached-token fields are not comparable. Absent means comparable. */
  readonly uncachedTokensComparable?: boolean;
}

export function uncachedComparable(native: NativeLoad): boolean {
  return (native as SchedulingNativeLoad).uncachedTokensComparable !== false;
}

/**
 * The native data the pressure comparisons may use: capacity-only data (a worker
 * whose uncached tokens are not comparable) counts as none here, so the comparison
 * falls back to router-local load exactly as for a worker without native data.
 * Capacity admission reads `load.native` directly.
 */
export function pressureData(load: LoadView, worker: PolicyWorker): NativeLoad | undefined {
  const native = load.native(worker);
  return native !== undefined && uncachedComparable(native) ? native : undefined;
}

/**
 * Builds the lookup over `items`. The mode is decided here, once, from the whole
 * set; an empty set compares on router-local load.
 */
export function lookupOver<T>(load: LoadView, items: readonly T[], workerOf: (item: T) => PolicyWorker): PressureLookup {
  let allNative = items.length > 0;
  let allEstimates = allNative;
  for (let i = 0; i < items.length && allNative; i++) {
    const native = pressureData(load, workerOf(items[i] as T));
    if (native === undefined) allNative = false;
    else if (native.estimatedPrefillQueueMs === undefined) allEstimates = false;
  }
  return {
    load,
    compareEngine: allNative,
    source: !allNative ? 'router_local' : allEstimates ? 'estimated_prefill_queue_ms' : 'native_queue_tokens',
  };
}

/** Lookup-mode prefill comparison, without the id tie-break (callers add it where the reference does). */
export function comparePressure(lookup: PressureLookup, a: PolicyWorker, b: PolicyWorker): number {
  if (lookup.compareEngine) {
    const na = pressureData(lookup.load, a);
    const nb = pressureData(lookup.load, b);
    if (na !== undefined && nb !== undefined) {
      const c = comparePrefillLoad(na, nb);
      if (c !== 0) return c;
    }
  }
  return compareActiveLoad(a, b);
}

/** Pairwise-mode comparison for the power-of-k scan: engine data only when both sides have it. */
export function comparePairwise(load: LoadView, a: PolicyWorker, b: PolicyWorker): number {
  const na = pressureData(load, a);
  const nb = pressureData(load, b);
  if (na !== undefined && nb !== undefined) {
    const c = comparePrefillLoad(na, nb);
    if (c !== 0) return c;
  }
  return compareActiveLoad(a, b);
}

/**
 * materially_more_pressured: both an absolute and a relative margin must be
 * exceeded, so small fleets with tiny queues do not flap between workers.
 */
export function materiallyMorePressured(x: NativeLoad, y: NativeLoad, t: PressureThresholds): boolean {
  // Raw prompt lengths (a non cache-aware engine) say nothing about prefill pressure.
  if (!uncachedComparable(x) || !uncachedComparable(y)) return false;
  const xMs = x.estimatedPrefillQueueMs;
  const yMs = y.estimatedPrefillQueueMs;
  if (t.absMs !== null && xMs !== undefined && yMs !== undefined) {
    return xMs - yMs > t.absMs && xMs > yMs * t.rel;
  }
  const diff = Math.max(0, x.waitingUncachedTokens - y.waitingUncachedTokens);
  return diff > t.absTokens && x.waitingUncachedTokens > y.waitingUncachedTokens * t.rel;
}
