import type { FleetWorker } from './view-model.js';

/** In the order `s` cycles through them. */
export const SORT_KEYS = ['waiting', 'rejections', 'running', 'inflight', 'age', 'url'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export function nextSortKey(k: SortKey): SortKey {
  return SORT_KEYS[(SORT_KEYS.indexOf(k) + 1) % SORT_KEYS.length]!;
}

/**
 * Workers in display order. `waiting` puts the longest engine queue first (unknown
 * queues last, then by in-flight), `rejections` the worker the gate turns away most
 * often (rate, then total), `running` and `inflight` the busiest first, `age` the
 * stalest load sample first, `url` is alphabetical. `reverse` turns any of them
 * around. Ties always fall back to the URL so rows do not jump between frames.
 */
export function sortWorkers(workers: readonly FleetWorker[], key: SortKey, reverse = false): FleetWorker[] {
  // Sorted by index over numeric keys, the URL as its rank in URL order: at thousands of
  // workers, a comparator reading objects and comparing URLs at every step was most of a frame.
  const n = workers.length;
  const rank = urlRanks(workers);
  const first = new Float64Array(n);
  const second = new Float64Array(n);
  const known = (v: number | null): number => v ?? -Infinity;
  for (let i = 0; i < n; i++) {
    const w = workers[i]!;
    if (key === 'waiting') {
      first[i] = known(w.waiting);
      second[i] = known(w.inflight);
    } else if (key === 'rejections') {
      first[i] = known(w.gateRejectionsPerS);
      second[i] = known(w.gateRejectionsTotal);
    } else if (key !== 'url') {
      first[i] = known(key === 'running' ? w.running : key === 'inflight' ? w.inflight : w.sampleAgeMs);
      second[i] = 0;
    }
  }
  // Descending, unknown (-Infinity) last; two unknowns tie (their difference is NaN).
  const desc = (a: number, b: number): number => b - a || 0;
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (i, j) => desc(first[i]!, first[j]!) || desc(second[i]!, second[j]!) || rank[i]! - rank[j]!,
  );
  const out = order.map((i) => workers[i]!);
  return reverse ? out.reverse() : out;
}

/** The URL order of the last list ranked, reused while the URLs stand (they seldom change between views). */
let ranked: { urls: string[]; rank: Int32Array } = { urls: [], rank: new Int32Array(0) };

/** Each worker's place in URL order (ties keep the list's order). */
function urlRanks(workers: readonly FleetWorker[]): Int32Array {
  const n = workers.length;
  let same = ranked.urls.length === n;
  for (let i = 0; same && i < n; i++) same = ranked.urls[i] === workers[i]!.url;
  if (same) return ranked.rank;
  const urls = workers.map((w) => w.url);
  const byUrl = Array.from({ length: n }, (_, i) => i).sort((i, j) => (urls[i]! < urls[j]! ? -1 : urls[i]! > urls[j]! ? 1 : i - j));
  const rank = new Int32Array(n);
  byUrl.forEach((i, at) => (rank[i] = at));
  ranked = { urls, rank };
  return rank;
}

/** Case-insensitive substring match on the worker URL; an empty filter keeps everything. */
export function filterWorkers(workers: readonly FleetWorker[], filter: string): FleetWorker[] {
  const f = filter.trim().toLowerCase();
  return f === '' ? [...workers] : workers.filter((w) => w.url.toLowerCase().includes(f));
}

/** The last order computed for each list of workers (a view's). */
const shownCache = new WeakMap<readonly FleetWorker[], { filter: string; key: SortKey; reverse: boolean; out: readonly FleetWorker[] }>();

/**
 * filterWorkers then sortWorkers, computed once per view and asked order: the
 * console draws many frames per view (keys, the clock) and each asks for the order of
 * the whole fleet, while only a new view can change it. Callers must not change the
 * list they get.
 */
export function shownWorkers(workers: readonly FleetWorker[], filter: string, key: SortKey, reverse = false): readonly FleetWorker[] {
  const hit = shownCache.get(workers);
  if (hit !== undefined && hit.filter === filter && hit.key === key && hit.reverse === reverse) return hit.out;
  const out = sortWorkers(filterWorkers(workers, filter), key, reverse);
  shownCache.set(workers, { filter, key, reverse, out });
  return out;
}
