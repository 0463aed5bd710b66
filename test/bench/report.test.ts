import { describe, expect, it } from 'vitest';
import { configurationChart } from '../../src/bench/charts.js';
import type { CompareRun } from '../../src/bench/compare.js';
import { fleetCapacity, rateForLoad } from '../../src/bench/fleet-shape.js';
import { ProgressLine, renderProgress } from '../../src/bench/progress.js';
import { renderCompareReport, renderRunReport } from '../../src/bench/report-text.js';
import { summarize } from '../../src/bench/summary.js';
import { DEFAULT_WORKLOAD, meanArrivalRate } from '../../src/workload/index.js';
import type { DriverCounts, RequestResult } from '../../src/workload/index.js';

const counts: DriverCounts = {
  dispatched: 3,
  sent: 3,
  finished: 3,
  ok: 2,
  failed: 1,
  inflight: 0,
  shed: 0,
  held: 0,
  waiting: 0,
  unsent: 0,
};
const ok = (ttft: number, cached: number): RequestResult => ({
  seq: 0,
  session: 0,
  family: 0,
  turn: 0,
  status: 200,
  error: undefined,
  startedAt: 10,
  scheduledAt: 0,
  heldMs: 0,
  ttftMs: ttft,
  latencyMs: ttft * 4,
  itlMs: [6, 7],
  promptTokens: 1000,
  cachedTokens: cached,
  completionTokens: 3,
});
const failed: RequestResult = { ...ok(1, 0), status: 503, error: 'policy_selection_failed' };

function run(letter: string, label: string, ttft: number, cached: number, digest = 'ab'.repeat(32)): CompareRun {
  return {
    letter,
    label,
    args: label.split(' '),
    settings: { policy: 'cache_aware', worker_queue_limit: null, saturation_queue_floor: null, min_load_choices: 2 },
    url: 'http://127.0.0.1:1',
    workerUrls: ['http://127.0.0.1:2'],
    model: 'sim',
    summary: summarize({ results: [ok(ttft, cached), ok(ttft * 2, cached), failed], counts, startedAt: 0, warmupMs: 0, sloTtftMs: 2000 }),
    arrivals: { count: 3, digest },
    router: {
      decisions: { cache_hit: 10, cache_miss: 2, cache_worker_queued: 3, all_queued: 0 },
      diverted: 3,
      diverted_blocks: 300,
      gate_rejections: 5,
      partial_diversions: 0,
      selection_failures: 0,
      policy_reasons: {},
    },
    interrupted: false,
  };
}

const fleet = { workers: 8, maxRunning: 8, speedup: 0.5, kvBlocks: 8192, flavor: 'sglang' as const, seed: 7 };

describe('text reports', () => {
  it('the --url report has the percentile table, throughput, cache ratio, errors and decisions', () => {
    const text = renderRunReport(run('A', 'x', 20, 800), { ...DEFAULT_WORKLOAD }, 60_000, false);
    expect(text).toMatch(/TTFT ms\s+20\.0\s+40\.0\s+40\.0/);
    expect(text).toMatch(/ITL ms/);
    expect(text).toMatch(/latency ms/);
    expect(text).toMatch(/throughput \d/);
    expect(text).toMatch(/cached\s+80\.0% of prompt tokens/);
    expect(text).toMatch(/errors\s+1 \(503: 1; policy_selection_failed 1\)/);
    expect(text).toMatch(/router\s+cache_hit 10, cache_miss 2, cache_worker_queued 3, all_queued 0/);
    expect(text).not.toMatch(/\u001b\[/);
  });

  it('the comparison puts configurations side by side, says whether arrivals matched, and charts them', () => {
    const runs = [run('A', '--policy round_robin', 50, 300), run('B', '--policy cache_aware', 20, 800)];
    const text = renderCompareReport(runs, {
      fleet,
      capacity: 80,
      load: 0.9,
      workload: { ...DEFAULT_WORKLOAD },
      durationMs: 30_000,
      sameArrivals: true,
      interrupted: false,
      color: false,
      width: 100,
    });
    expect(text).toMatch(/A\s+--policy round_robin/);
    expect(text).toMatch(/TTFT p99 ms\s+100\s+40\.0/);
    expect(text).toMatch(/cached tokens\s+30\.0%\s+80\.0%/);
    expect(text).toMatch(/cache_worker_queued\s+3\s+3/);
    expect(text).toMatch(/same arrivals/);
    expect(text).toMatch(/TTFT by configuration/);
    expect(text).toMatch(/Cached-token ratio by configuration/);
    expect(text).not.toMatch(/\u001b\[/);
    const other = renderCompareReport(runs, {
      fleet,
      capacity: 80,
      load: 0.9,
      workload: { ...DEFAULT_WORKLOAD },
      durationMs: 30_000,
      sameArrivals: false,
      interrupted: false,
      color: false,
      width: 100,
    });
    expect(other).toMatch(/NOT offered the same arrivals/);
  });

  it('charts give each configuration a band under its letter', () => {
    const chart = configurationChart({
      title: 't',
      unit: 'ms',
      letters: ['A', 'B', 'C'],
      color: false,
      width: 30,
      series: [{ name: 'p50', values: [1, null, 3], color: undefined }],
    });
    const lines = chart.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^\s+A\s+B\s+C\s*$/);
    expect(chart).not.toMatch(/\u001b\[/);
    expect(
      configurationChart({
        title: 'empty',
        unit: '%',
        letters: ['A'],
        color: false,
        series: [{ name: 'x', values: [null], color: undefined }],
      }),
    ).toBe('empty: no data\n');
  });
});

describe('progress line', () => {
  it('draws nothing when stderr is not a terminal', () => {
    const writes: string[] = [];
    const line = new ProgressLine({ isTTY: false, write: (s) => (writes.push(s), true) }, false);
    line.start(
      'bench',
      1000,
      () => performance.now(),
      () => counts,
    );
    line.status('starting');
    line.stop();
    expect(writes).toEqual([]);
  });

  it('on a terminal, rewrites one line and clears it at the end', () => {
    const writes: string[] = [];
    const line = new ProgressLine({ isTTY: true, columns: 100, write: (s) => (writes.push(s), true) }, false);
    line.start(
      'A 1/2',
      1000,
      () => performance.now(),
      () => counts,
    );
    line.stop();
    expect(writes[0]).toMatch(/^\r\u001b\[2KA 1\/2 \[[#.]{20}\] /);
    expect(writes.at(-1)).toBe('\r\u001b[2K');
  });

  it('fits the terminal width', () => {
    expect(renderProgress('bench', 5000, 60_000, counts, 30, false).length).toBeLessThanOrEqual(29);
    expect(renderProgress('bench', 5000, 60_000, counts, 200, false)).toMatch(/5s\/1m {2}sent 3 ok 2 err 1 in-flight 0$/);
  });
});

describe('fleet capacity', () => {
  it('grows with engines, batch size and speed, and the rate leaves room for bursts', () => {
    const w = DEFAULT_WORKLOAD;
    const c = fleetCapacity(fleet, w);
    expect(fleetCapacity({ ...fleet, workers: 16 }, w)).toBeCloseTo(2 * c, 6);
    expect(fleetCapacity({ ...fleet, speedup: 1 }, w)).toBeCloseTo(2 * c, 6);
    expect(fleetCapacity({ ...fleet, maxRunning: 16 }, w)).toBeGreaterThan(c);
    const rate = rateForLoad(c, meanArrivalRate({ ...w, rate: 1 }), 0.9);
    expect(rate * meanArrivalRate({ ...w, rate: 1 })).toBeCloseTo(0.9 * c, 0);
  });
});
