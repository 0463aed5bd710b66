import { describe, expect, it } from 'vitest';
import {
  SseParser,
  computeRates,
  filterWorkers,
  mergeReplicas,
  nextSortKey,
  snapshotFromAdmin,
  snapshotFromPrometheus,
  sortWorkers,
  NotARouterMetricsError,
} from '../../src/fleet/index.js';
import type { FleetWorker, ReplicaSnapshot } from '../../src/fleet/index.js';
import { fleetJson, formatOnce } from '../../src/top/index.js';
import { NO_LATCH, bannersFor } from '../../src/tui/index.js';
import { adminDoc, fixture, prometheusFixture, status, viewOf } from './fixtures.js';

describe('admin state → snapshot', () => {
  it("maps our router's own /admin/state document field by field", () => {
    const doc = JSON.parse(fixture('routerctl-admin-state.json'));
    const s = snapshotFromAdmin(doc)!;
    expect(s.source).toBe('admin');
    expect(s.router).toMatchObject({
      policy: 'cache_aware',
      workerQueueLimit: 6,
      minLoadChoices: 2,
      simulated: true,
      loadFreshnessMs: 5000,
    });
    expect(s.workers).toHaveLength(4);
    expect(s.workers[0]).toEqual({
      url: doc.workers[0].url,
      healthy: true,
      breaker: 'closed',
      waiting: doc.workers[0].waiting,
      running: doc.workers[0].running,
      sampleAgeMs: doc.workers[0].sample_age_ms,
      loadSource: 'poll',
      fresh: true,
      gated: false,
      inflight: doc.workers[0].inflight,
      requestsTotal: doc.workers[0].requests_total,
      gateRejectionsTotal: doc.workers[0].gate_rejections_total,
    });
    expect(s.decisions).toEqual(doc.decisions);
    expect(s.diverted).toEqual(doc.diverted_overlap_blocks);
    expect(s.at).toBe(doc.timestamp_ms);
    expect(s.blind).toEqual([]);
  });

  it('keeps unknown waiting as null, never 0', () => {
    const s = snapshotFromAdmin(
      adminDoc({ workers: [{ url: 'http://a:1', waiting: null, running: null, fresh: false, sample_age_ms: null }] }),
    )!;
    expect(s.workers[0]).toMatchObject({ waiting: null, running: null, fresh: false, sampleAgeMs: null });
  });

  it('refuses documents that are not admin state, and tolerates mistyped fields', () => {
    expect(snapshotFromAdmin({ error: { code: 'not_found' } })).toBeUndefined();
    expect(snapshotFromAdmin('text')).toBeUndefined();
    const s = snapshotFromAdmin({ router: { policy: 7 }, workers: [{ url: 'http://a:1', waiting: '3' }, { nope: 1 }] })!;
    expect(s.router.policy).toBeNull();
    expect(s.workers).toHaveLength(1);
    expect(s.workers[0]!.waiting).toBeNull();
    expect(s.decisions).toBeNull();
  });
});

describe('Prometheus → snapshot', () => {
  it("reads the Rust sgl-router's names: decisions, histogram, failures, in-flight per worker_url", () => {
    const s = snapshotFromPrometheus(prometheusFixture('sgl-router-metrics.txt'), 1000);
    expect(s.source).toBe('prometheus');
    // Summed over both model_ids of the fixture.
    expect(s.decisions).toEqual({ cache_hit: 9013, cache_miss: 655, cache_worker_queued: 39, all_queued: 5 });
    expect(s.selectionFailuresTotal).toBe(8);
    expect(s.diverted!.count).toBe(39);
    expect(s.diverted!.sum).toBe(10294);
    expect(s.diverted!.buckets.find((b) => b.le === 8)).toEqual({ le: 8, count: 31 });
    expect(s.diverted!.buckets.some((b) => !Number.isFinite(b.le))).toBe(false);
    expect(s.workers.map((w) => [w.url, w.inflight])).toEqual([
      ['http://10.0.0.1:30000', 12],
      ['http://10.0.0.2:30000', 9],
      ['http://10.0.0.3:30000@1', 0],
    ]);
    expect(s.workers.every((w) => w.waiting === null && w.gated === null)).toBe(true);
    expect(s.router).toMatchObject({ policy: 'cache_aware', policyInferred: true, modelId: 'llama-8b, tiny', workerQueueLimit: null });
    expect(s.requestsTotal).toBe(1520 + 8811);
    expect(s.alerts).toEqual({ allQueued: null, gateInert: null });
    expect(s.blind).toEqual(
      expect.arrayContaining(['engine queues', 'queue limit', 'gated workers', 'gate rejections', 'gate-inert alert']),
    );
  });

  it("reads routerctl's own /metrics, additions included (waiting, sample age, gate rejections, inert)", () => {
    const text = fixture('routerctl-metrics.txt');
    const admin = JSON.parse(fixture('routerctl-admin-state.json'));
    const s = snapshotFromPrometheus(text);
    expect(s.workers.map((w) => w.url).sort()).toEqual(admin.workers.map((w: { url: string }) => w.url).sort());
    for (const w of s.workers) {
      expect(w.waiting).not.toBeNull();
      expect(w.sampleAgeMs).not.toBeNull();
      expect(w.gateRejectionsTotal).not.toBeNull();
      expect(w.breaker).toBe('closed');
      expect(w.healthy).toBe(true);
    }
    expect(s.alerts.gateInert).toBe(false);
    expect(s.blind).not.toContain('engine queues');
    expect(s.blind).not.toContain('gate rejections');
    expect(s.blind).toContain('queue limit');
    expect(s.decisions!.all_queued).toBeGreaterThan(0);
  });

  it('accepts OpenMetrics-style counters declared without _total', () => {
    const text = [
      '# TYPE sgl_router_cache_aware_decisions counter',
      'sgl_router_cache_aware_decisions_total{model_id="m",decision="cache_hit"} 5',
      'sgl_router_cache_aware_decisions_total{model_id="m",decision="all_queued"} 2',
      '# EOF',
    ].join('\n');
    expect(snapshotFromPrometheus(text).decisions).toEqual({ cache_hit: 5, cache_miss: 0, cache_worker_queued: 0, all_queued: 2 });
  });

  it('says when a /metrics page belongs to an engine, not a router', () => {
    expect(() => snapshotFromPrometheus(prometheusFixture('sglang-engine-metrics.txt'))).toThrow(NotARouterMetricsError);
    expect(() => snapshotFromPrometheus(prometheusFixture('sglang-engine-metrics.txt'))).toThrow(/SGLang engine/);
    expect(() => snapshotFromPrometheus(prometheusFixture('vllm-engine-metrics.txt'))).toThrow(/vLLM engine/);
  });
});

describe('rates', () => {
  const at = (t: number, d: Partial<Record<string, number>>, rej = 0): ReplicaSnapshot =>
    snapshotFromAdmin(
      adminDoc({
        timestamp: t,
        decisions: d,
        workers: [{ url: 'http://w:1', gate_rejections_total: rej }],
        requests: (d.cache_hit ?? 0) + 100,
      }),
    )!;

  it('are per second between snapshots', () => {
    const r = computeRates(at(0, { cache_hit: 10, all_queued: 0 }, 5), at(2000, { cache_hit: 30, all_queued: 4 }, 9))!;
    expect(r.decisionsPerS!.cache_hit).toBe(10);
    expect(r.decisionsPerS!.all_queued).toBe(2);
    expect(r.requestsPerS).toBe(10);
    expect(r.gateRejectionsPerSByWorker.get('http://w:1')).toBe(2);
  });

  it('are unknown on the first snapshot and across a counter reset', () => {
    expect(computeRates(undefined, at(0, {}))).toBeNull();
    const r = computeRates(at(0, { cache_hit: 100 }), at(1000, { cache_hit: 3 }))!;
    expect(r.decisionsPerS).toBeNull();
    expect(r.requestsPerS).toBeNull();
  });
});

describe('merging replicas', () => {
  const a = snapshotFromAdmin(
    adminDoc({
      workers: [
        { url: 'http://w1:1', waiting: 7, sample_age_ms: 900, inflight: 4 },
        { url: 'http://w2:1', waiting: 1, inflight: 1 },
      ],
      decisions: { cache_hit: 10, cache_miss: 1, cache_worker_queued: 1, all_queued: 0 },
    }),
  )!;
  const b = snapshotFromAdmin(
    adminDoc({
      workers: [
        { url: 'http://w1:1', waiting: 5, sample_age_ms: 100, inflight: 2 },
        { url: 'http://w3:1', waiting: 0, inflight: 0 },
      ],
      decisions: { cache_hit: 20, cache_miss: 2, cache_worker_queued: 0, all_queued: 3 },
    }),
  )!;
  const view = mergeReplicas([status('http://r1', a), status('http://r2', b)]);

  it('takes engine load from the freshest sample and adds up router-local counts', () => {
    const w1 = view.workers.find((w) => w.url === 'http://w1:1')!;
    expect(w1.waiting).toBe(5);
    expect(w1.sampleAgeMs).toBe(100);
    expect(w1.inflight).toBe(6);
    expect(w1.inflightByReplica).toEqual([4, 2]);
    expect(w1.gated).toBe(true); // the r1 replica gates it (7 >= 6)
    expect(view.workers.find((w) => w.url === 'http://w3:1')!.inflightByReplica).toEqual([null, 0]);
    expect(view.decisions).toEqual({ cache_hit: 30, cache_miss: 3, cache_worker_queued: 1, all_queued: 3 });
    expect(view.diverted!.count).toBe(80);
  });

  it('computes the hit ratio without all_queued', () => {
    expect(view.hitRatio).toBeCloseTo(30 / 34);
  });

  it('raises an alert when any live replica does', () => {
    const c = snapshotFromAdmin(adminDoc({ allQueued: true }))!;
    expect(mergeReplicas([status('http://r1', a), status('http://r2', c)]).alerts.allQueued).toBe(true);
  });

  it('a replica that stops answering leaves every fleet figure, and rejoins when it answers', () => {
    // r2 saw the fleet saturated and had requests in flight when it stopped.
    const c = snapshotFromAdmin(adminDoc({ allQueued: true }))!;
    const rates = computeRates({ ...a, at: a.at - 1000, requestsTotal: (a.requestsTotal ?? 0) - 10 }, a);
    const down = { ...status('http://r2', c), live: false, error: 'connection refused' };
    const v = mergeReplicas([status('http://r1', a, rates), down]);
    expect(v.replicas[1]!.live).toBe(false);
    expect(v.alerts.allQueued).toBe(mergeReplicas([status('http://r1', a, rates)]).alerts.allQueued);
    expect(v.requestsPerS).toBe(10);
    expect(v.fleet.inflightTotal).toBe(mergeReplicas([status('http://r1', a)]).fleet.inflightTotal);
    expect(v.workers[0]!.inflightByReplica[1]).toBeNull();
    expect(formatOnce(v, { color: false, sort: 'waiting', filter: '', blockSize: 16 })).toMatch(
      /DOWN http:\/\/r2: connection refused \(not counted\)/,
    );
    // Answering again, it counts again.
    expect(mergeReplicas([status('http://r1', a), status('http://r2', c)]).alerts.allQueued).toBe(true);
    // With no replica answering, the last view stays on screen rather than going blank.
    const alone = mergeReplicas([{ ...status('http://r1', a), live: false, error: 'timeout' }]);
    expect(alone.workers.length).toBeGreaterThan(0);
  });

  it('infers saturation from all_queued decisions when no replica reports the alert', () => {
    const p = snapshotFromPrometheus(prometheusFixture('sgl-router-metrics.txt'), 0);
    const rates = computeRates({ ...p, at: -1000, decisions: { ...p.decisions!, all_queued: p.decisions!.all_queued - 2 } }, p);
    const v = mergeReplicas([status('http://rust', p, rates)]);
    expect(v.alerts.allQueued).toBeNull();
    expect(v.alerts.allQueuedInferred).toBe(true);
  });

  it('names the settings replicas disagree on', () => {
    const c = snapshotFromAdmin(adminDoc({ limit: 8 }))!;
    expect(mergeReplicas([status('http://r1', a), status('http://r2', c)]).mismatched).toEqual(['worker_queue_limit']);
  });

  it('says whether the live replicas hold the same prefix index; a down replica does not count', () => {
    const withIndex = (digest: string, source = 'events') =>
      snapshotFromAdmin({ ...adminDoc({}), prefix_index: { source, blocks: 10, owner_pairs: 12, digest } })!;
    expect(mergeReplicas([status('http://r1', withIndex('ab')), status('http://r2', withIndex('ab'))]).prefixIndex).toEqual({
      source: 'events',
      agree: true,
      notes: [],
    });
    expect(
      mergeReplicas([status('http://r1', withIndex('ab', 'requests')), status('http://r2', withIndex('cd', 'requests'))]).prefixIndex,
    ).toEqual({ source: 'requests', agree: false, notes: [] });
    const down = { ...status('http://r2', withIndex('cd')), live: false, error: 'connection refused' };
    expect(mergeReplicas([status('http://r1', withIndex('ab')), down]).prefixIndex).toEqual({ source: 'events', agree: null, notes: [] });
    const view = mergeReplicas([status('http://r1', withIndex('ab')), status('http://r2', withIndex('ab'))]);
    expect(formatOnce(view, { color: false, sort: 'waiting', filter: '', blockSize: 16 })).toMatch(/index \(events\) same on all replicas/);
    expect(fleetJson(view)).toMatchObject({ prefix_index: { source: 'events', replicas_agree: true } });
  });

  it('an events index a worker left incomplete (a partial catch-up) is said in top --once, --json and a console banner', () => {
    const note =
      "partial catch-up: the engine's replay buffer no longer held the first 12 batches; blocks stored in them are missing until the engine stores them again";
    const doc = adminDoc({});
    const workers = (doc.workers as Array<Record<string, unknown>>).map((w, i) => ({ ...w, kv_events: { note: i === 0 ? note : null } }));
    const view = mergeReplicas([
      status(
        'http://r1',
        snapshotFromAdmin({ ...doc, workers, prefix_index: { source: 'events', blocks: 10, owner_pairs: 12, digest: 'ab' } })!,
      ),
    ]);
    const url = workers[0]!.url as string;
    expect(view.prefixIndex.notes).toEqual([`${url}: ${note}`]);
    expect(formatOnce(view, { color: false, sort: 'waiting', filter: '', blockSize: 16 })).toContain(
      `\nKV index: ${url}: partial catch-up: `,
    );
    expect(fleetJson(view)).toMatchObject({ prefix_index: { notes: [`${url}: ${note}`] } });
    expect(bannersFor(view, NO_LATCH, 0).map((b) => b.text)).toContain(`KV index incomplete · ${url}: ${note}`);
  });
});

describe('sort and filter', () => {
  const view = viewOf(
    adminDoc({
      workers: [
        { url: 'http://b:1', waiting: 2, gate_rejections_total: 50 },
        { url: 'http://a:1', waiting: 9 },
        { url: 'http://c:1', waiting: null },
      ],
    }),
  );
  it('orders by waiting (unknown last), rejections and url', () => {
    expect(sortWorkers(view.workers, 'waiting').map((w) => w.url)).toEqual(['http://a:1', 'http://b:1', 'http://c:1']);
    expect(sortWorkers(view.workers, 'rejections')[0]!.url).toBe('http://b:1');
    expect(sortWorkers(view.workers, 'url').map((w) => w.url)).toEqual(['http://a:1', 'http://b:1', 'http://c:1']);
    expect(nextSortKey('waiting')).toBe('rejections');
    expect(nextSortKey('url')).toBe('waiting');
  });
  it('filters by URL substring, case-insensitively', () => {
    expect(filterWorkers(view.workers, 'B:').map((w) => w.url)).toEqual(['http://b:1']);
    expect(filterWorkers(view.workers, '')).toHaveLength(3);
  });
});

describe('SSE parser', () => {
  it('joins data lines, honours event names, ignores comments, survives any split', () => {
    const text = ': hi\r\nevent: state\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: x\n\nevent: other\ndata: y\r\r';
    const whole = new SseParser().push(text);
    expect(whole).toEqual([
      { event: 'state', data: '{"a":\n1}' },
      { event: 'message', data: 'x' },
      { event: 'other', data: 'y' },
    ]);
    for (let cut = 1; cut < text.length; cut++) {
      const p = new SseParser();
      expect([...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))]).toEqual(whole);
    }
  });
});

describe('--once and --json output', () => {
  const view = viewOf(
    adminDoc({
      workers: [
        { url: 'http://10.0.0.1:31000', waiting: 9 },
        { url: 'http://10.0.0.2:31000', waiting: 3 },
      ],
      allQueued: true,
      simulated: true,
    }),
  );

  it('prints a plain table with the waiting counts, GATED, the alert and the decision mix', () => {
    const out = formatOnce(view, { color: false, sort: 'waiting', filter: '', blockSize: 16 });
    expect(out).not.toMatch(/\u001b\[/);
    const rows = out.split('\n');
    expect(rows.find((l) => l.startsWith('10.0.0.1:31000'))).toMatch(/9\/6 .*GATED/);
    expect(rows.find((l) => l.startsWith('10.0.0.2:31000'))).toMatch(/3\/6 .* no /);
    expect(out).toContain('ALERT fleet saturated');
    expect(out).toContain('SIMULATED');
    expect(out).toContain('cache_hit 700 · cache_miss 90 · cache_worker_queued 40 · all_queued 2');
    expect(out).toContain(`hit ratio   ${((700 / 830) * 100).toFixed(1)}%`);
    expect(out).toMatch(/diverted overlap {2}40 diversions, mean 55\.3 blocks/);
  });

  it('colours only when asked', () => {
    expect(formatOnce(view, { color: true, sort: 'waiting', filter: '', blockSize: 16 })).toMatch(/\u001b\[31m/);
  });

  it("JSON keeps the admin state's names and adds what merging knows", () => {
    const j = fleetJson(view) as { workers: Array<Record<string, unknown>>; alerts: unknown; cache_hit_ratio: number; replicas: unknown[] };
    expect(j.workers[0]).toMatchObject({ url: 'http://10.0.0.1:31000', waiting: 9, gated: true, inflight_by_replica: [3] });
    expect(j.alerts).toEqual({ all_queued: true, gate_inert: false });
    expect(j.cache_hit_ratio).toBeCloseTo(700 / 830);
    expect(j.replicas).toHaveLength(1);
  });

  it('JSON honours --sort and --filter as the table does', () => {
    const urls = (o: { sort?: 'waiting' | 'url' | 'rejections'; filter?: string }) =>
      (fleetJson(view, o) as { workers: Array<{ url: string }> }).workers.map((w) => w.url);
    expect(urls({ sort: 'waiting' })).toEqual(['http://10.0.0.1:31000', 'http://10.0.0.2:31000']);
    expect(urls({ sort: 'url', filter: '0.2' })).toEqual(['http://10.0.0.2:31000']);
    expect(urls({ filter: 'nothing' })).toEqual([]);
  });
});

describe('RateWindow', () => {
  it('averages over the last 5 s of snapshots, not between neighbours, and starts again after a counter reset', async () => {
    const { RateWindow } = await import('../../src/fleet/index.js');
    const base = snapshotFromAdmin(adminDoc({}))!;
    const at = (ms: number, requests: number) => ({ ...base, at: 1_000_000 + ms, requestsTotal: requests });
    const w = new RateWindow();
    expect(w.push(at(0, 100))).toBeNull();
    // Steps of 1 then 3 per half second: neighbours would say 2/s then 6/s.
    const rates = [1, 3, 1, 3, 1, 3].map(
      (step, i, all) => w.push(at(500 * (i + 1), 100 + all.slice(0, i + 1).reduce((a, b) => a + b, 0)))!.requestsPerS!,
    );
    expect(rates.at(-1)).toBeCloseTo(12 / 3, 5); // 12 requests over 3 s
    // Past 5 s the oldest snapshots drop out of the window.
    for (let i = 7; i <= 20; i++) w.push(at(500 * i, 100 + 2 * i));
    expect(w.push(at(500 * 21, 100 + 2 * 21))!.requestsPerS).toBeCloseTo(4, 5);
    // The router restarted: its counter went back.
    expect(w.push(at(500 * 22, 3))).toBeNull();
    expect(w.push(at(500 * 23, 5))!.requestsPerS).toBeCloseTo(4, 5);
  });
});

describe("latency from the routers' histograms", () => {
  it('quantiles interpolate within buckets; a delta is what happened in between', async () => {
    const { histogramDelta, histogramQuantile } = await import('../../src/fleet/index.js');
    const h = (counts: number[], sum = 0) => ({
      buckets: [0.1, 0.5, 1, 5].map((le, i) => ({ le, count: counts[i]! })),
      count: counts.at(-1)!,
      sum,
    });
    // 100 observations: 50 under 0.1 s, 40 in (0.1, 0.5], 10 in (0.5, 1].
    const all = h([50, 90, 100, 100]);
    expect(histogramQuantile(all, 0.5)).toBeCloseTo(0.1, 9);
    expect(histogramQuantile(all, 0.7)).toBeCloseTo(0.1 + 0.4 * (20 / 40), 9);
    expect(histogramQuantile(all, 0.99)).toBeCloseTo(0.5 + 0.5 * (9 / 10), 9);
    expect(histogramQuantile(h([0, 0, 0, 0]), 0.5)).toBeNull();
    expect(histogramDelta(h([10, 20, 30, 30], 3), all)).toEqual({
      buckets: [
        { le: 0.1, count: 40 },
        { le: 0.5, count: 70 },
        { le: 1, count: 70 },
        { le: 5, count: 70 },
      ],
      count: 70,
      sum: -3,
    });
    expect(histogramDelta(all, h([1, 1, 1, 1]))).toBeNull(); // went backwards: a restart
  });

  it("the header gives the window's end-to-end and TTFT p50 and p99 beside the rate; --once and --json give them since start", () => {
    const hist = (counts: number[]) => ({
      buckets: [0.05, 0.25, 1, 10].map((le, i) => ({ le, count: counts[i]! })),
      count: counts.at(-1)!,
      sum: 0,
    });
    const before = { ...snapshotFromAdmin(adminDoc({}))!, at: 1_000, ttft: hist([0, 0, 0, 0]), duration: hist([0, 0, 0, 0]) };
    const after = { ...before, at: 3_000, ttft: hist([8, 10, 10, 10]), duration: hist([0, 2, 9, 10]) };
    const view = mergeReplicas([status('http://r1', after, computeRates(before, after))]);
    expect(view.latency.window.requests).toBe(10);
    expect(view.latency.window.e2eP50?.value).toBeCloseTo(0.25 + 0.75 * (3 / 7), 6);
    expect(formatOnce(view, { color: false, sort: 'waiting', filter: '', blockSize: 16 })).toMatch(
      /latency since start \(10 requests\) {2}end-to-end p50 \S+ p99 \S+ · TTFT p50 \S+ p99 \S+/,
    );
    expect(fleetJson(view)).toMatchObject({ latency_seconds: { overall: { requests: 10 } } });
  });
});

describe('sorting by any column, either way', () => {
  it.each([
    ['waiting', ['a', 'b', 'c']],
    ['running', ['c', 'a', 'b']],
    ['inflight', ['b', 'c', 'a']],
    ['age', ['a', 'c', 'b']],
    ['url', ['a', 'b', 'c']],
  ] as const)('%s, and reversed', async (key, order) => {
    const { sortWorkers } = await import('../../src/fleet/index.js');
    const w = (url: string, o: Partial<FleetWorker>): FleetWorker => ({
      url,
      healthy: true,
      breaker: 'closed',
      waiting: 0,
      running: 0,
      sampleAgeMs: 0,
      loadSource: null,
      fresh: true,
      gated: false,
      inflight: 0,
      requestsTotal: 0,
      gateRejectionsTotal: 0,
      inflightByReplica: [],
      gateRejectionsPerS: 0,
      ...o,
    });
    const workers = [
      w('c', { waiting: 1, running: 9, inflight: 5, sampleAgeMs: 300 }),
      w('b', { waiting: 4, running: 1, inflight: 7, sampleAgeMs: 10 }),
      w('a', { waiting: 8, running: 5, inflight: 2, sampleAgeMs: 900 }),
    ];
    expect(sortWorkers(workers, key).map((x) => x.url)).toEqual(order);
    expect(sortWorkers(workers, key, true).map((x) => x.url)).toEqual([...order].reverse());
  });
});

describe('ReplayFeed', () => {
  it('applies recorded updates in order through the rate windows and the merge; pauses, steps, and ends', async () => {
    const { ReplayFeed } = await import('../../src/fleet/index.js');
    const snap = (at: number, requests: number) => ({ ...snapshotFromAdmin(adminDoc({}))!, at, requestsTotal: requests });
    const updates = [
      { at: 1000, replica: 'http://r1', source: 'admin' as const, live: true, error: null, snapshot: snap(1000, 10) },
      { at: 2000, replica: 'http://r1', source: 'admin' as const, live: true, error: null, snapshot: snap(2000, 30) },
      { at: 3000, replica: 'http://r1', source: 'admin' as const, live: false, error: 'connection refused', snapshot: null },
    ];
    const feed = new ReplayFeed(updates);
    let seen = 0;
    feed.subscribe(() => seen++);
    feed.paused = true;
    feed.step();
    expect(feed.get()!.requestsPerS).toBeNull(); // one snapshot: no rate yet
    feed.step();
    expect(feed.get()!.requestsPerS).toBe(20);
    expect(feed.position).toMatchObject({ at: 2000, index: 2, total: 3 });
    feed.step();
    expect(feed.get()!.replicas[0]).toMatchObject({ live: false, error: 'connection refused' });
    expect(feed.get()!.workers.length).toBeGreaterThan(0); // the last view stays while nothing answers
    expect(feed.done).toBe(true);
    feed.step(); // past the end: nothing
    expect(seen).toBe(3);
    feed.faster();
    feed.faster();
    expect(feed.speed).toBe(4);
    feed.close();
  });
});

describe("other routers' /metrics (docs/metrics-and-admin.md §Other routers' metrics)", () => {
  it('the classic sgl-router: per-worker series by `worker`, its breaker and health gauges, a removed worker (-1) left out', () => {
    const s = snapshotFromPrometheus(prometheusFixture('sgl-router-classic-metrics.txt'), 1_700_000_100_000);
    expect(s.router.foreign).toBe('classic sgl-router');
    expect(s.router.policy).toBe('cache_aware');
    expect(s.workers.map((w) => [w.url, w.inflight, w.breaker, w.healthy, w.requestsTotal])).toEqual([
      ['http://10.0.0.1:30000', 14, 'closed', true, 4102],
      ['http://10.0.0.2:30000', 9, 'half_open', true, 3911],
      ['http://10.0.0.3:30000', 0, 'open', false, 2318],
    ]);
    // Hits and misses only: it has no queue gate, so nothing is ever queued or diverted.
    expect(s.decisions).toEqual({ cache_hit: 7021, cache_miss: 3339, cache_worker_queued: 0, all_queued: 0 });
    expect(s.requestsTotal).toBe(1520 + 8811);
    expect(s.duration?.count).toBe(10_331);
    expect(s.ttft).toBeNull();
    expect(s.router.uptimeS).toBe(100);
    expect(s.blind).toEqual(expect.arrayContaining(['engine queues', 'sample age', 'queue limit', 'gate rejections']));
    expect(s.blind).not.toContain('latency');
  });

  it('the Shepherd Model Gateway: smg_* names, engine queues summed over DP ranks, latency with TTFT', () => {
    const s = snapshotFromPrometheus(prometheusFixture('smg-metrics.txt'), 0);
    expect(s.router.foreign).toBe('Shepherd Model Gateway');
    expect(s.router.policy).toBe('cache_aware');
    expect(s.workers.map((w) => [w.url, w.waiting, w.running, w.inflight, w.breaker, w.healthy])).toEqual([
      ['http://10.0.1.1:30000', 7, 17, 17, 'closed', true],
      ['http://10.0.1.2:30000', 11, 21, 22, 'closed', true],
      ['http://10.0.1.3:30000', 0, 3, 3, 'closed', true],
    ]);
    expect(s.workers.map((w) => w.kvUsage)).toEqual([0.62, 0.71, 0.12]);
    expect(s.requestsTotal).toBe(6100);
    expect(s.duration?.count).toBe(6100);
    expect(s.ttft?.count).toBe(5000);
    expect(s.decisions).toBeNull();
    expect(s.blind).not.toContain('engine queues');
    expect(s.blind).toEqual(expect.arrayContaining(['sample age', 'queue limit', 'gate rejections']));
    const view = mergeReplicas([status('http://smg:30000', s)]);
    expect(view.latency.overall.e2eP50).not.toBeNull();
    expect(view.latency.overall.ttftP50).not.toBeNull();
    expect(formatOnce(view, { color: false, sort: 'waiting', filter: '', blockSize: 16 })).toContain(
      'source prometheus /metrics (Shepherd Model Gateway)',
    );
  });

  it('smg 1.13.0 as the running process wrote it: per-worker requests, its own gate and branches under its own names', () => {
    const s = snapshotFromPrometheus(prometheusFixture('smg-1.13.0-metrics.txt'), 0);
    expect(s.router.foreign).toBe('Shepherd Model Gateway');
    expect(s.router.policy).toBe('cache_aware');
    expect(s.workers.map((w) => [w.url, w.requestsTotal, w.waiting, w.running, w.inflight, w.breaker, w.healthy])).toEqual([
      ['http://127.0.0.1:41000', 3, 0, 0, 0, 'closed', true],
      ['http://127.0.0.1:41001', 4, 0, 0, 0, 'closed', true],
    ]);
    expect(s.requestsTotal).toBe(7);
    expect(s.duration?.count).toBe(7);
    // Its TTFT histogram times only gRPC workers: over HTTP it is exported empty.
    expect(s.ttft?.count ?? 0).toBe(0);
    expect(s.router.ownCounters?.map((c) => [c.metric, c.counts])).toEqual([
      ['smg_worker_overload_fallback_total', { selection: 0 }],
      ['smg_worker_overload_shed_total', { pd_admission: 0, dispatch: 0, selection: 0 }],
      ['smg_cache_aware_policy_branch_total', { expected_wait_fallback: 7 }],
    ]);
  });

  it('vllm-router 0.1.17 as the running process wrote it: only the workers it used, intake without its /metrics scrapes', () => {
    const s = snapshotFromPrometheus(prometheusFixture('vllm-router-0.1.17-metrics.txt'), 0);
    expect(s.router.foreign).toBe('vLLM router');
    expect(s.router.policy).toBe('cache_aware');
    expect(s.workers.map((w) => [w.url, w.requestsTotal, w.inflight, w.breaker, w.healthy, w.waiting])).toEqual([
      ['http://127.0.0.1:41001', 9, 0, 'closed', true, null],
      ['http://127.0.0.1:41000', null, null, null, true, null],
    ]);
    // Two GET /metrics on its serving port are counted by route beside the seven chats.
    expect(s.requestsTotal).toBe(7);
    expect(s.duration?.count).toBe(9);
    expect(s.blind).toEqual(expect.arrayContaining(['engine queues', 'queue limit', 'gate rejections']));
    expect(s.router.ownCounters?.map((c) => [c.metric, c.counts])).toEqual([
      ['vllm_router_prefix_routing_decisions_total', { missing_tokens: 9 }],
      ['vllm_router_kv_routing_inputs_total', { render_unavailable: 14 }],
    ]);
  });

  it("routerctl's own page carries its latency histograms", () => {
    const s = snapshotFromPrometheus(prometheusFixture('sgl-router-metrics.txt'), 0);
    expect(s.router.foreign).toBeUndefined();
    expect(s.duration).not.toBeNull();
  });
});

describe('a stream over its budget', () => {
  it("the replica's status says how many workers the last event left behind, and 0 once they caught up", async () => {
    const { createServer } = await import('node:http');
    const { Agent } = await import('undici');
    const { ReplicaClient } = await import('../../src/fleet/index.js');
    const doc = adminDoc({ timestamp: 1_000 });
    const delta = (deferred: number | undefined, at: number) =>
      JSON.stringify({ set: { timestamp_ms: at }, workers: [], removed: [], sample_clock_ms: at, ...(deferred ? { deferred } : {}) });
    // A router's stream as the wire carries it: the whole state, then two deltas.
    const server = createServer((req, res) => {
      if (!req.url?.startsWith('/admin/stream')) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: state\ndata: ${JSON.stringify(doc)}\n\n`);
      res.write(`event: state_delta\ndata: ${delta(3080, 2_000)}\n\n`);
      setTimeout(() => res.write(`event: state_delta\ndata: ${delta(undefined, 3_000)}\n\n`), 200);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const dispatcher = new Agent();
    const seen: Array<number | undefined> = [];
    const client = new ReplicaClient({ url, source: 'admin', intervalMs: 1000, dispatcher }, (s) => seen.push(s.snapshot?.behind));
    client.start();
    try {
      const deadline = Date.now() + 5000;
      while (seen.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen.slice(0, 3)).toEqual([undefined, 3080, undefined]);
    } finally {
      await client.stop();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await dispatcher.close();
    }
  });
});
