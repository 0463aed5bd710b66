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
  const byUrl = (a: FleetWorker, b: FleetWorker): number => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
  const desc = (a: number | null, b: number | null): number => (b ?? -Infinity) - (a ?? -Infinity) || 0;
  const order: Record<SortKey, (a: FleetWorker, b: FleetWorker) => number> = {
    url: byUrl,
    waiting: (a, b) => desc(a.waiting, b.waiting) || desc(a.inflight, b.inflight) || byUrl(a, b),
    rejections: (a, b) =>
      desc(a.gateRejectionsPerS, b.gateRejectionsPerS) || desc(a.gateRejectionsTotal, b.gateRejectionsTotal) || byUrl(a, b),
    running: (a, b) => desc(a.running, b.running) || byUrl(a, b),
    inflight: (a, b) => desc(a.inflight, b.inflight) || byUrl(a, b),
    age: (a, b) => desc(a.sampleAgeMs, b.sampleAgeMs) || byUrl(a, b),
  };
  const out = [...workers].sort(order[key]);
  return reverse ? out.reverse() : out;
}

/** Case-insensitive substring match on the worker URL; an empty filter keeps everything. */
export function filterWorkers(workers: readonly FleetWorker[], filter: string): FleetWorker[] {
  const f = filter.trim().toLowerCase();
  return f === '' ? [...workers] : workers.filter((w) => w.url.toLowerCase().includes(f));
}
