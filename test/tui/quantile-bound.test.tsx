import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import {
  computeRates,
  fmtQuantileSeconds,
  histogramQuantile,
  histogramQuantileEstimate,
  mergeReplicas,
  snapshotFromAdmin,
  snapshotFromPrometheus,
} from '../../src/fleet/index.js';
import type { FleetView, Histogram } from '../../src/fleet/index.js';
import { fleetJson, formatOnce } from '../../src/top/index.js';
import { ConsoleApp } from '../../src/tui/index.js';
import { adminDoc, fixture, prometheusFixture, status } from './fixtures.js';

// Issue 31 item 3: a quantile above a histogram's last finite bound is that bound as a
// lower bound, and every reader says "> bound" rather than showing the bound as a figure.

/** The Rust router's e2e buckets (sgl_router_request_duration_seconds), top finite bound 30 s. */
const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A histogram of these observations (seconds) over BOUNDS. */
function histogramOf(observations: number[]): Histogram {
  return {
    buckets: BOUNDS.map((le) => ({ le, count: observations.filter((o) => o <= le).length })),
    count: observations.length,
    sum: observations.reduce((a, o) => a + o, 0),
  };
}

describe('histogramQuantileEstimate at the edges', () => {
  it.each([
    { name: 'inside a bucket', obs: [...Array(50).fill(0.3), ...Array(50).fill(0.7)], q: 0.5, value: 0.5, lowerBound: false },
    { name: 'inside a bucket, interpolated', obs: Array(100).fill(0.7), q: 0.5, value: 0.75, lowerBound: false },
    { name: 'inside the top finite bucket', obs: Array(100).fill(20), q: 0.5, value: 20, lowerBound: false },
    // 99 of 100 at or under 30 s: the 99th lies exactly at the top bound, which is a measurement.
    { name: 'exactly at the top bound', obs: [...Array(99).fill(30), 45], q: 0.99, value: 30, lowerBound: false },
    { name: 'just past the top bound (+Inf)', obs: [...Array(98).fill(30), 45, 45], q: 0.99, value: 30, lowerBound: true },
    { name: 'all in +Inf', obs: Array(10).fill(120), q: 0.5, value: 30, lowerBound: true },
  ])('$name: q=$q → $value (lower bound: $lowerBound)', ({ obs, q, value, lowerBound }) => {
    const e = histogramQuantileEstimate(histogramOf(obs), q)!;
    expect(e.value).toBeCloseTo(value, 9);
    expect(e.lowerBound).toBe(lowerBound);
    // The plain reader keeps its number, bound or not.
    expect(histogramQuantile(histogramOf(obs), q)).toBeCloseTo(value, 9);
  });

  it.each([
    { name: 'no histogram', h: null },
    { name: 'an empty histogram', h: histogramOf([]) },
    { name: 'observations with no finite bucket', h: { buckets: [], count: 3, sum: 9 } },
  ])('$name: null', ({ h }) => {
    expect(histogramQuantileEstimate(h, 0.5)).toBeNull();
    expect(histogramQuantileEstimate(h, 0.99)).toBeNull();
  });
});

describe('fmtQuantileSeconds', () => {
  it.each([
    { q: null, text: '–' },
    { q: { value: 0.75, lowerBound: false }, text: '750ms' },
    { q: { value: 30, lowerBound: false }, text: '30.0s' },
    { q: { value: 30, lowerBound: true }, text: '> 30s' },
    { q: { value: 2.5, lowerBound: true }, text: '> 2.5s' },
    { q: { value: 0.4, lowerBound: true }, text: '> 400ms' },
    { q: { value: 400, lowerBound: true }, text: '> 6m40s' },
  ])('$q → "$text"', ({ q, text }) => {
    expect(fmtQuantileSeconds(q)).toBe(text);
  });
});

const NOW = 1_700_000_000_500;

describe('replicas with different top buckets', () => {
  it("say no more than the lowest top bound: one replica's requests past its 30 s are not placed under another's 60 s", () => {
    const base = snapshotFromAdmin(adminDoc({}))!;
    const bounds = (tops: number[], observations: number[]): Histogram => ({
      buckets: tops.map((le) => ({ le, count: observations.filter((o) => o <= le).length })),
      count: observations.length,
      sum: observations.reduce((a, o) => a + o, 0),
    });
    const a = { ...base, duration: bounds([10, 30], Array(10).fill(31)) };
    const b = { ...base, duration: bounds([10, 30, 60], Array(10).fill(20)) };
    const view = mergeReplicas([status('http://r1:30000', a), status('http://r2:30000', b)], base.at);
    expect(view.latency.overall.e2eP99).toEqual({ value: 30, lowerBound: true });
  });
});

/**
 * A recorded exposition with more observations added to one histogram family, the
 * way the router would count them: each bucket at or above the value, `_count` and `_sum`.
 */
function observe(exposition: string, family: string, seconds: number[]): string {
  return exposition
    .split('\n')
    .map((line) => {
      const bucket = line.match(new RegExp(`^(${family}_bucket\\{.*le="([^"]+)"\\}) (\\S+)$`));
      if (bucket) {
        const le = bucket[2] === '+Inf' ? Infinity : Number(bucket[2]);
        return `${bucket[1]} ${Number(bucket[3]) + seconds.filter((s) => s <= le).length}`;
      }
      const total = line.match(new RegExp(`^(${family}_(count|sum)(\\{.*\\})?) (\\S+)$`));
      if (total) {
        const add = total[2] === 'count' ? seconds.length : seconds.reduce((a, s) => a + s, 0);
        return `${total[1]} ${Number(total[4]) + add}`;
      }
      return line;
    })
    .join('\n');
}

/** Two scrapes 2 s apart of a recorded /metrics page; in between, 90 requests of 1.5 s and 10 of 45 s ended. */
function slowTail(exposition: string): FleetView {
  const before = snapshotFromPrometheus(exposition, NOW - 2000);
  const seconds = [...Array(90).fill(1.5), ...Array(10).fill(45)];
  const after = snapshotFromPrometheus(observe(exposition, 'sgl_router_request_duration_seconds', seconds), NOW);
  return mergeReplicas([status('http://127.0.0.1:30000', after, computeRates(before, after))], NOW);
}

const recorded = [
  { router: 'routerctl', exposition: fixture('routerctl-metrics.txt') },
  { router: 'the Rust sgl-router', exposition: prometheusFixture('sgl-router-metrics.txt') },
];

let unmounts: Array<() => void> = [];
afterEach(() => {
  for (const u of unmounts) u();
  unmounts = [];
});

describe('a p99 past the top bucket', () => {
  it.each(recorded)('the console of $router says "> 30s", never "30.0s"', async ({ exposition }) => {
    const view = slowTail(exposition);
    expect(view.latency.window.e2eP99).toEqual({ value: 30, lowerBound: true });
    const r = render(
      <ConsoleApp
        feed={{ get: () => view, subscribe: () => () => {} }}
        onQuit={() => {}}
        color={false}
        title="routerctl top"
        target="http://127.0.0.1:30000"
        intervalMs={1000}
        blockSize={16}
        size={{ columns: 160, rows: 40 }}
        now={NOW}
      />,
    );
    unmounts.push(() => r.unmount());
    await new Promise((done) => setTimeout(done, 0));
    const frame = r.lastFrame() ?? '';
    expect(frame).toMatch(/e2e p50 \S+ p99 > 30s/);
    expect(frame).not.toContain('30.0s');
  });

  it('the latency chart, flat at the bound, says the p99 was above it', async () => {
    const view = slowTail(fixture('routerctl-metrics.txt'));
    const feed = { value: view, listeners: new Set<() => void>() };
    const r = render(
      <ConsoleApp
        feed={{ get: () => feed.value, subscribe: (l) => (feed.listeners.add(l), () => feed.listeners.delete(l)) }}
        onQuit={() => {}}
        color={false}
        title="routerctl top"
        target="http://127.0.0.1:30000"
        intervalMs={1000}
        blockSize={16}
        size={{ columns: 200, rows: 60 }}
        now={NOW}
      />,
    );
    unmounts.push(() => r.unmount());
    for (let i = 1; i <= 4; i++) {
      feed.value = { ...view, at: view.at + i * 1000 };
      for (const l of feed.listeners) l();
      await new Promise((done) => setTimeout(done, 0));
    }
    const deadline = Date.now() + 2000;
    while (!(r.lastFrame() ?? '').includes('LATENCY ms') && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10));
    expect(r.lastFrame()).toMatch(/LATENCY ms {2}e2e p50 o · e2e p99 # · TTFT p50 t · p99 > 30s/);
  });

  it.each(recorded)('top --once and --json of $router mark it as a lower bound', ({ exposition }) => {
    // --once and --json read since start: the recorded requests and the 100 added.
    const view = slowTail(exposition);
    expect(view.latency.overall.e2eP99).toEqual({ value: 30, lowerBound: true });
    const once = formatOnce(view, { color: false, sort: 'waiting', filter: '', blockSize: 16 });
    expect(once).toMatch(/end-to-end p50 \S+ p99 > 30s/);
    expect(once).not.toContain('30.0s');
    const json = fleetJson(view) as { latency_seconds: { overall: Record<string, unknown> } };
    expect(json.latency_seconds.overall).toMatchObject({ e2e_p99: 30, e2e_p99_lower_bound: true, e2e_p50_lower_bound: false });
    expect(typeof json.latency_seconds.overall.e2e_p50).toBe('number');
  });
});
