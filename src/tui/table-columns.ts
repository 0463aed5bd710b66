import type { FleetWorker } from '../fleet/index.js';

export type ColumnId = 'worker' | 'waiting' | 'trend' | 'running' | 'inflight' | 'replicas' | 'age' | 'gated' | 'rejections' | 'breaker';

export interface Column {
  id: ColumnId;
  title: string;
  width: number;
  align: 'left' | 'right';
}

export const BAR_WIDTH = 10;
const MIN_WORKER_WIDTH = 14;
/** Dropped first when the terminal is narrow. */
const DROP_ORDER: ColumnId[] = ['trend', 'breaker', 'replicas', 'running', 'age', 'inflight', 'rejections'];

/** Samples in a worker's sparkline. */
export const TREND_WIDTH = 12;

/**
 * The worker table's columns for a width: every column fixed except the worker URL,
 * which takes what is left; when that falls under 14 characters, the least telling
 * columns go first (breaker, per-replica split, running, ...). Waiting and gated
 * never go: they are what the console is for.
 */
export function planColumns(opts: { width: number; workers: readonly FleetWorker[]; limit: number | null; replicas: number }): Column[] {
  const { maxWaiting, perReplica, longest } = measure(opts.workers, opts.replicas);
  const num = opts.limit !== null ? `${maxWaiting}/${opts.limit}`.length : String(maxWaiting).length;
  const waitingWidth = (opts.limit !== null ? BAR_WIDTH + 1 : 0) + Math.max(num, opts.limit !== null ? 4 : 7);
  let cols: Column[] = [
    { id: 'worker', title: 'WORKER', width: 0, align: 'left' },
    { id: 'waiting', title: 'WAITING', width: waitingWidth, align: 'left' },
    { id: 'trend', title: 'RECENT', width: TREND_WIDTH, align: 'left' },
    { id: 'running', title: 'RUN', width: 4, align: 'right' },
    { id: 'inflight', title: 'INFL', width: 5, align: 'right' },
    ...(opts.replicas > 1 ? [{ id: 'replicas' as const, title: 'PER-REPL', width: perReplica, align: 'left' as const }] : []),
    { id: 'age', title: 'SAMPLE', width: 10, align: 'left' },
    { id: 'gated', title: 'GATE', width: 5, align: 'left' },
    { id: 'rejections', title: 'REJ/s', width: 6, align: 'right' },
    { id: 'breaker', title: 'BREAKER', width: 7, align: 'left' },
  ];
  const fixed = (): number => cols.reduce((a, c) => a + c.width, 0) + (cols.length - 1);
  for (const id of DROP_ORDER) {
    if (opts.width - fixed() >= MIN_WORKER_WIDTH) break;
    cols = cols.filter((c) => c.id !== id);
  }
  // The URL column takes what is left, but no more than the longest URL needs.
  cols[0]!.width = Math.max(7, Math.min(longest, opts.width - fixed()));
  return cols;
}

/** What the columns' widths need from the whole list, measured once per list (a view's sorted workers), not once per frame. */
const measured = new WeakMap<readonly FleetWorker[], { replicas: number; maxWaiting: number; perReplica: number; longest: number }>();

function measure(workers: readonly FleetWorker[], replicas: number): { maxWaiting: number; perReplica: number; longest: number } {
  let m = measured.get(workers);
  if (m !== undefined && m.replicas === replicas) return m;
  m = { replicas, maxWaiting: 0, perReplica: 8, longest: 7 };
  for (const w of workers) {
    m.maxWaiting = Math.max(m.maxWaiting, w.waiting ?? 0);
    // The per-replica column exists only with several replicas.
    if (replicas > 1)
      m.perReplica = Math.max(m.perReplica, w.inflightByReplica.map((v) => (v === null ? '–' : String(v))).join('|').length);
    const scheme = w.url.startsWith('http://') ? 7 : w.url.startsWith('https://') ? 8 : 0;
    m.longest = Math.max(m.longest, w.url.length - scheme);
  }
  measured.set(workers, m);
  return m;
}
