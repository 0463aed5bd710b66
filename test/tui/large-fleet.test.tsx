import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mergeReplicas, shownWorkers, snapshotFromAdmin, sortWorkers } from '../../src/fleet/index.js';
import type { FleetView, FleetWorker, SortKey, WorkerSnapshot } from '../../src/fleet/index.js';
import { mergeParts, onePart } from '../../src/fleet/merge.js';
import { ConsoleApp, HistoryBuffers, sampleOf } from '../../src/tui/index.js';
import type { Store } from '../../src/tui/index.js';
import { adminDoc, status } from './fixtures.js';

/**
 * The console in front of thousands of workers: the per-view work is done once per
 * view (sorting, measuring, the per-worker history), and what it shows is what the
 * general code would show: the one-replica merge, the index sort and the lazy history
 * are held against the plain forms they stand in for.
 */

/** A deterministic spread of values, nulls included. */
const pick = <T,>(i: number, values: readonly T[]): T => values[(i * 7919 + 13) % values.length]!;

function workerDocs(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    url: `http://10.0.${Math.floor(i / 250)}.${i % 250}:${31000 + (i % 3)}`,
    waiting: pick(i, [0, 1, 2, 3, 6, 9, null]),
    running: pick(i + 1, [0, 4, 8, null]),
    sample_age_ms: pick(i + 2, [10, 120, 3000, null]),
    inflight: pick(i + 3, [0, 1, 5]),
    gate_rejections_total: pick(i + 4, [0, 0, 3, 40]),
    fresh: pick(i + 5, [true, true, false]),
    healthy: pick(i + 6, [true, true, true, false]),
    breaker: pick(i + 7, ['closed', 'closed', 'open', 'half_open'] as const),
    ...(i % 2 === 0 ? { kv_usage: pick(i, [0.1, 0.5, null]) } : {}),
  }));
}

/** The sort as it was written before the index sort: the reference it must match. */
function referenceSort(workers: readonly FleetWorker[], key: SortKey, reverse: boolean): FleetWorker[] {
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

const view = (n: number): FleetView => {
  const snap = snapshotFromAdmin(adminDoc({ workers: workerDocs(n) }))!;
  return mergeReplicas([status('http://127.0.0.1:30000', snap)], snap.at);
};

describe('the fleet view at thousands of workers', () => {
  it('sorts as the plain comparator does, by every key, both ways', () => {
    const v = view(600);
    for (const key of ['waiting', 'rejections', 'running', 'inflight', 'age', 'url'] as const)
      for (const reverse of [false, true])
        expect(
          sortWorkers(v.workers, key, reverse).map((w) => w.url),
          `${key} ${reverse}`,
        ).toEqual(referenceSort(v.workers, key, reverse).map((w) => w.url));
  });

  it('sorts a view once per order asked, whatever the number of frames', () => {
    const v = view(50);
    const a = shownWorkers(v.workers, '', 'waiting');
    expect(shownWorkers(v.workers, '', 'waiting')).toBe(a);
    expect(shownWorkers(v.workers, '', 'url')).not.toBe(a);
    expect(shownWorkers(v.workers, '10.0.0.1', 'url').every((w) => w.url.includes('10.0.0.1'))).toBe(true);
  });

  it('merges a worker one replica has as the general merge does', () => {
    const snap = snapshotFromAdmin(adminDoc({ workers: workerDocs(200) }))!;
    const variants: WorkerSnapshot[] = snap.workers.flatMap((w) => [
      w,
      { ...w, waiting: null, running: null },
      { ...w, healthy: null, fresh: null, gated: null, inflight: null, sampleAgeMs: null },
    ]);
    for (const p of variants) expect(onePart(p)).toEqual(mergeParts([p]));
  });

  it("keeps each worker's history as it was when the series was taken, read only where asked", () => {
    const h = new HistoryBuffers(16);
    const views = [view(30), view(30)];
    h.push(sampleOf(views[0]!));
    const before = h.series();
    for (let i = 0; i < 600; i++) h.push(sampleOf(views[1]!));
    const url = views[0]!.workers[3]!.url;
    expect(before.byWorker.get(url)).toEqual([views[0]!.workers[3]!.waiting]);
    expect(h.series().byWorker.get(url)).toHaveLength(120);
    expect([...before.runningByWorker.keys()]).toHaveLength(30);
  });
});

const stores: Array<() => void> = [];
afterEach(() => {
  for (const c of stores) c();
  stores.length = 0;
});

describe('the console at 4,096 workers', () => {
  it('draws the rows that fit and says how many more there are', () => {
    const v = view(4096);
    const feed: Store<FleetView | undefined> = { get: () => v, subscribe: () => () => undefined };
    const r = render(
      <ConsoleApp
        feed={feed}
        onQuit={vi.fn()}
        color={false}
        title="routerctl top"
        target="http://127.0.0.1:30000"
        intervalMs={1000}
        blockSize={16}
        size={{ columns: 200, rows: 60 }}
        now={1_700_000_000_500}
      />,
    );
    stores.push(() => r.unmount());
    const lines = (r.lastFrame() ?? '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(59);
    const first = sortWorkers(v.workers, 'waiting')[0]!.url.replace(/^https?:\/\//, '');
    expect(lines.some((l) => l.includes(first))).toBe(true);
    expect(lines.some((l) => /… \d+ more \(4096 workers/.test(l))).toBe(true);
  });
});
