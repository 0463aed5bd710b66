import { EventEmitter } from 'node:events';
import { render as inkRender } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { computeRates, mergeReplicas, snapshotFromAdmin, snapshotFromPrometheus } from '../../src/fleet/index.js';
import type { FleetView } from '../../src/fleet/index.js';
import { ConsoleApp } from '../../src/tui/index.js';
import type { ChildState, Store } from '../../src/tui/index.js';
import { adminDecision } from '../helpers/admin-decision.js';
import { adminDoc, prometheusFixture, status, viewOf } from './fixtures.js';

const NOW = 1_700_000_000_500;

/** React 19 flushes on its scheduler: a macrotask after input before reading the frame. */
const tick = async (): Promise<void> => {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 0));
};

/**
 * Ticks until `cond` holds (at most 2 s). A lone ESC byte is held back by the input
 * parser until it is sure no escape sequence follows, which on a busy machine takes
 * longer than one tick.
 */
const settle = async (cond: () => boolean): Promise<void> => {
  const deadline = Date.now() + 2000;
  while (!cond() && Date.now() < deadline) await tick();
};

function mutableStore<T>(value: T): Store<T> & { set(v: T): void } {
  const listeners = new Set<() => void>();
  return {
    get: () => value,
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    set(v: T) {
      value = v;
      for (const l of listeners) l();
    },
  };
}

let cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

function mount(view: FleetView | undefined, o: { color?: boolean; columns?: number; rows?: number; child?: Store<ChildState> } = {}) {
  const feed = mutableStore<FleetView | undefined>(view);
  const onQuit = vi.fn();
  const r = render(
    <ConsoleApp
      feed={feed}
      child={o.child}
      onQuit={onQuit}
      color={o.color ?? false}
      title="routerctl top"
      target="http://127.0.0.1:30000"
      intervalMs={1000}
      blockSize={16}
      size={{ columns: o.columns ?? 80, rows: o.rows ?? 24 }}
      now={NOW}
    />,
  );
  cleanups.push(() => r.unmount());
  const frame = (): string => r.lastFrame() ?? '';
  const row = (text: string): string | undefined =>
    frame()
      .split('\n')
      .find((l) => l.includes(text));
  return { ...r, feed, onQuit, frame, row };
}

const fleet = (workers: Parameters<typeof adminDoc>[0]['workers'], extra: Parameters<typeof adminDoc>[0] = {}) =>
  viewOf(adminDoc({ workers, ...extra }));

describe('the console', () => {
  it('marks a gated worker, and only that one', async () => {
    const c = mount(
      fleet([
        { url: 'http://10.0.0.1:31000', waiting: 7 },
        { url: 'http://10.0.0.2:31000', waiting: 2 },
        { url: 'http://10.0.0.3:31000', waiting: 4 },
      ]),
    );
    await tick();
    expect(c.row('10.0.0.1:31000')).toMatch(/7\/6 .*GATED/);
    expect(c.row('10.0.0.2:31000')).not.toContain('GATED');
    expect(c.row('10.0.0.3:31000')).not.toContain('GATED');
    // The queue bar is full for the gated worker, partial below the limit.
    expect(c.row('10.0.0.1:31000')).toContain('█████████+');
  });

  it('shows the fleet-saturated banner for an all_queued state, and the gate-inert banner', async () => {
    const c = mount(
      fleet(
        [
          { url: 'http://a:1', waiting: 6 },
          { url: 'http://b:1', waiting: 9 },
        ],
        { allQueued: true, gateInert: false },
      ),
    );
    await tick();
    expect(c.frame()).toContain('FLEET SATURATED');
    expect(c.frame()).toContain('all_queued');
    c.feed.set(fleet([{ url: 'http://a:1', waiting: null, fresh: false }], { gateInert: true }));
    await tick();
    expect(c.frame()).toContain('GATE INERT');
  });

  it.each([
    [80, 24],
    [200, 60],
  ])("two routers, one stopped: the live one's view, the stopped one marked down with its age (%i×%i)", async (columns, rows) => {
    const live = snapshotFromAdmin(
      adminDoc({
        workers: [
          { url: 'http://a:1', waiting: 0 },
          { url: 'http://b:1', waiting: 1 },
        ],
      }),
    )!;
    // The stopped replica saw the fleet saturated and gated before it went.
    const stopped = snapshotFromAdmin(
      adminDoc({
        allQueued: true,
        workers: [
          { url: 'http://a:1', waiting: 8 },
          { url: 'http://b:1', waiting: 9 },
        ],
      }),
    )!;
    const view = mergeReplicas(
      [
        status('http://r1:30000', live),
        { ...status('http://r2:30000', stopped), live: false, error: 'connection refused', receivedAt: NOW - 45_000 },
      ],
      NOW,
    );
    const c = mount(view, { columns, rows });
    await tick();
    expect(c.frame()).not.toContain('FLEET SATURATED');
    expect(c.frame()).not.toContain('GATED');
    expect(c.frame()).toMatch(/DOWN for 45\.0s r2:30000/);
    for (const line of c.frame().split('\n')) expect(line.length).toBeLessThanOrEqual(columns);
    expect(c.frame().split('\n').length).toBeLessThanOrEqual(rows - 1);
  });

  it("puts the window's latency right after the request rate, and fits it at 80 columns", async () => {
    const hist = (counts: number[]) => ({
      buckets: [0.05, 0.25, 1, 10].map((le, i) => ({ le, count: counts[i]! })),
      count: counts.at(-1)!,
      sum: 0,
    });
    const before = { ...snapshotFromAdmin(adminDoc({}))!, at: NOW - 2000, ttft: hist([0, 0, 0, 0]), duration: hist([0, 0, 0, 0]) };
    const after = { ...before, at: NOW, ttft: hist([8, 10, 10, 10]), duration: hist([0, 2, 9, 10]) };
    const c = mount(mergeReplicas([status('http://r1:30000', after, computeRates(before, after))], NOW), { columns: 80, rows: 24 });
    await tick();
    const l2 = c.frame().split('\n')[1]!;
    expect(l2).toMatch(/req\/s \(5s avg\) {2}e2e p50 \S+ p99 \S+ {2}TTFT p50 \S+ p99 \S+/);
  });

  it.each([
    {
      name: 'requests arriving, none finished: a stall, said in place of the figures',
      arrived: 40,
      finished: 0,
      want: /req\/s \(5s avg\) {2}e2e: none finished in 5s {2}source/,
    },
    {
      name: 'an idle fleet finishing none says the same',
      arrived: 0,
      finished: 0,
      want: /^0 req\/s \(5s avg\) {2}e2e: none finished in 5s {2}source/,
    },
    {
      name: 'one request finished: its figures',
      arrived: 40,
      finished: 1,
      want: /req\/s \(5s avg\) {2}e2e p50 \S+ p99 \S+ {2}TTFT/,
    },
  ])('the header latency when $name', async ({ arrived, finished, want }) => {
    const hist = (n: number) => ({ buckets: [0.05, 0.25, 1, 10].map((le) => ({ le, count: n })), count: n, sum: 0.01 * n });
    const doc = snapshotFromAdmin(adminDoc({}))!;
    const before = { ...doc, at: NOW - 5000, requestsTotal: 500, ttft: hist(30), duration: hist(30) };
    const after = { ...before, at: NOW, requestsTotal: 500 + arrived, ttft: hist(30 + finished), duration: hist(30 + finished) };
    const c = mount(mergeReplicas([status('http://r1:30000', after, computeRates(before, after))], NOW), { columns: 80, rows: 24 });
    await tick();
    expect(c.frame().split('\n')[1]!).toMatch(want);
    // A first snapshot has no window yet: nothing is said about it.
    const first = mount(mergeReplicas([status('http://r1:30000', after, null)], NOW), { columns: 80, rows: 24 });
    await tick();
    expect(first.frame().split('\n')[1]!).not.toMatch(/e2e/);
  });

  it("draws each worker's recent queue as a sparkline against the limit, on a wide terminal", async () => {
    const c = mount(
      fleet([
        { url: 'http://a:1', waiting: 0 },
        { url: 'http://b:1', waiting: 0 },
      ]),
      { columns: 200, rows: 40 },
    );
    await tick();
    for (const [a, b] of [
      [1, 0],
      [3, 0],
      [6, 1],
      [9, 0],
    ]) {
      c.feed.set(
        fleet([
          { url: 'http://a:1', waiting: a },
          { url: 'http://b:1', waiting: b },
        ]),
      );
      await tick();
    }
    expect(c.frame()).toContain('RECENT');
    // a: 0, 1, 3, 6, 9 against a limit of 6 (the top is 9 once past it); b stays low.
    expect(c.row('a:1')).toMatch(/▁▂▃▆█/);
    expect(c.row('b:1')).toMatch(/▁▁▁▂▁/);
  });

  it('shows the header: policy, limit, SIMULATED, source', async () => {
    const c = mount(fleet(undefined, { simulated: true }));
    await tick();
    const [l1, l2] = c.frame().split('\n');
    expect(l1).toMatch(/^routerctl top\s+SIMULATED\s+cache_aware\s+limit 6\s+floor –/);
    expect(l2).toMatch(/source admin API/);
  });

  it('shows an auto gate in the header with the limit it has in force, and marks workers against that limit', async () => {
    const doc = adminDoc({
      limit: null,
      workers: [
        { url: 'http://a:1', waiting: 6, gated: true },
        { url: 'http://b:1', waiting: 1 },
      ],
    });
    Object.assign(doc.router as Record<string, unknown>, {
      queue_gate_mode: 'auto',
      queue_gate_limit: 5,
      queue_gate_tokens: null,
      queue_gate_rule: "waiting ≥ 5 (auto: the larger of 4 and 2 × the pool's mean waiting, 2.5)",
    });
    const c = mount(viewOf(doc));
    await tick();
    expect(c.frame().split('\n')[0]).toMatch(/cache_aware\s+gate auto, limit 5 now\s+floor –/);
    expect(c.row('a:1')).toMatch(/GATED/);
    expect(c.row('b:1')).not.toMatch(/GATED/);
  });

  it.each([
    ['slo', 'off', /cache_aware\s+gate slo ≤ 2000 ms\s+floor –/],
    ['slo', 'slo', /cache_aware\s+gate slo ≤ 2000 ms \+admission\s+floor –/],
    ['fixed', 'slo', /cache_aware\s+limit 4, admit ≤ 2000 ms\s+floor –/],
  ] as const)('shows the TTFT goal in the header: gate %s, admission %s', async (mode, admission, header) => {
    const doc = adminDoc({ limit: mode === 'fixed' ? 4 : null, workers: [{ url: 'http://a:1', waiting: 9 }] });
    Object.assign(doc.router as Record<string, unknown>, {
      queue_gate_mode: mode,
      queue_gate_limit: mode === 'fixed' ? 4 : null,
      queue_gate_tokens: null,
      ttft_slo_ms: 2000,
      admission,
    });
    const c = mount(viewOf(doc));
    await tick();
    expect(c.frame().split('\n')[0]).toMatch(header);
    // No standing rule under slo: nobody is marked against a limit.
    if (mode === 'slo') expect(c.row('a:1')).not.toMatch(/GATED/);
  });

  it('at 80 columns, the facts come before what is cut: saturation duration, uptime and model, the whole help', async () => {
    const c = mount(
      fleet(
        [
          { url: 'http://a:1', waiting: 6 },
          { url: 'http://b:1', waiting: 9 },
        ],
        { allQueued: true },
      ),
      { columns: 80, rows: 24 },
    );
    await tick();
    expect(c.row('FLEET SATURATED')).toMatch(/FLEET SATURATED for \d/);
    const [l1] = c.frame().split('\n');
    expect(l1).toMatch(/ up \S+/);
    expect(l1).toContain('sim-llama');
    c.stdin.write('?');
    await tick();
    const help = c.frame();
    for (const word of ['again:', 'now)', 'latest)', 'url', 'closes it)', 'limit']) expect(help).toContain(word);
    for (const line of help.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it.each([
    [80, 24],
    [200, 60],
  ])('j/k select a worker, Enter opens its detail and ↓ goes to the next, Esc comes back (%i×%i)', async (columns, rows) => {
    const hist = (p50: number) => ({
      buckets: [0.01, 0.1, 1, 10].map((le) => ({ le, count: le >= p50 ? 10 : 0 })),
      count: 10,
      sum: p50 * 10,
    });
    const latency = { ttft_seconds: hist(0.1), duration_seconds: hist(1) };
    const workers = [
      { url: 'http://10.0.0.1:31000', waiting: 7, gate_rejections_total: 42, latency },
      { url: 'http://10.0.0.2:31000', waiting: 2, latency },
      { url: 'http://10.0.0.3:31000', waiting: 0, latency },
    ];
    const c = mount(fleet(workers), { columns, rows });
    await tick();
    c.stdin.write('j');
    await settle(() => c.frame().includes('›'));
    // The first in the table's order (sorted by waiting) is selected, marked without colour.
    expect(c.row('›')).toContain('10.0.0.1:31000');
    c.stdin.write('j');
    await settle(() => c.row('›')?.includes('10.0.0.2') === true);
    c.stdin.write('k');
    await settle(() => c.row('›')?.includes('10.0.0.1') === true);
    c.stdin.write('\r');
    await settle(() => c.frame().includes('WORKER http://10.0.0.1:31000'));
    const detail = c.frame();
    expect(detail).toMatch(/load\s+source unknown · sample 120ms fresh · waiting 7 · running 4 · in-flight 3/);
    expect(detail).toMatch(/gate\s+GATED waiting 7 ≥ limit 6 · rejections 42 total/);
    expect(detail).toMatch(/served 100 requests · last 5 s /);
    expect(detail).toMatch(/since start e2e p50 \S+ p99 \S+/);
    if (columns >= 120) expect(detail).toMatch(/since start e2e p50 \S+ p99 \S+ · TTFT p50 \S+ p99 \S+/);
    expect(detail).toMatch(/not in this source: KV cache usage/);
    expect(detail).toContain('HISTORY');
    expect(detail).toMatch(/Esc back/);
    const lines = detail.split('\n');
    expect(lines.length).toBeLessThanOrEqual(rows - 1);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(columns);
    // The table is gone while the detail is open.
    expect(detail).not.toMatch(/^WORKER\s+WAITING/m);
    c.stdin.write('\u001b[B');
    await settle(() => c.frame().includes('WORKER http://10.0.0.2:31000'));
    expect(c.frame()).toMatch(/admitted waiting 2 < limit 6/);
    c.stdin.write('\u001b');
    await settle(() => /^WORKER\s+WAITING/m.test(c.frame()));
    expect(c.row('›')).toContain('10.0.0.2:31000');
    // Esc again drops the selection.
    c.stdin.write('\u001b');
    await settle(() => !c.frame().includes('›'));
    expect(c.frame()).not.toContain('›');
  });

  it('charts latency beside the queues and decisions at 200×60, with marks that survive NO_COLOR', async () => {
    const base = fleet([
      { url: 'http://a:1', waiting: 1 },
      { url: 'http://b:1', waiting: 3 },
    ]);
    const c = mount(base, { columns: 200, rows: 60 });
    await tick();
    expect(c.frame()).not.toContain('LATENCY ms');
    const est = (value: number) => ({ value, lowerBound: false });
    for (const [i, p50] of [0.2, 0.3, 0.25, 0.4].entries()) {
      c.feed.set({
        ...base,
        at: base.at + (i + 1) * 1000,
        latency: {
          window: { ttftP50: est(p50 / 4), ttftP99: est(p50), e2eP50: est(p50), e2eP99: est(p50 * 3), requests: 10 },
          overall: base.latency.overall,
        },
      });
      await tick();
    }
    await settle(() => c.frame().includes('LATENCY ms'));
    const frame = c.frame();
    expect(frame).toMatch(/QUEUES .*DECISIONS\/s .*LATENCY ms {2}e2e p50 o · e2e p99 # · TTFT p50 t/);
    const lines = frame.split('\n');
    expect(lines.length).toBeLessThanOrEqual(59);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(200);
    // The p99 axis reaches 1.2 s.
    expect(frame).toMatch(/1200[┤┼]/);
  });

  it("the detail shows the engine's KV cache usage with its recent history when the router reports it", async () => {
    const c = mount(fleet([{ url: 'http://a:1', waiting: 1, kv_usage: 0.5 }]));
    await tick();
    c.feed.set(fleet([{ url: 'http://a:1', waiting: 1, kv_usage: 0.95 }]));
    await tick();
    c.stdin.write('\r');
    await settle(() => c.frame().includes('WORKER http://a:1'));
    expect(c.frame()).toMatch(/kv\s+95\.0% of the engine's KV cache in use {2}▅█/);
    expect(c.frame()).not.toMatch(/not in this source: .*KV cache usage/);
  });

  it('the detail shows the prefill rate the router learnt, and that it is still learning while cold', async () => {
    const prefill = (tokens_per_second: number | null) => ({
      tokens_per_second,
      base_ms: tokens_per_second === null ? null : 6.1,
      ahead_ms_per_token: tokens_per_second === null ? null : 0,
      samples: tokens_per_second === null ? 3 : 40,
      pending_tokens: 0,
      token_scale: 1,
    });
    const c = mount(fleet([{ url: 'http://a:1', waiting: 1, prefill: prefill(null) }]));
    await tick();
    c.stdin.write('\r');
    await settle(() => c.frame().includes('WORKER http://a:1'));
    expect(c.frame()).toMatch(/served \S+ requests · prefill learning/);
    c.feed.set(fleet([{ url: 'http://a:1', waiting: 1, prefill: prefill(21_480.6) }]));
    await settle(() => /prefill 21,481 tok\/s/.test(c.frame()));
    expect(c.frame()).not.toMatch(/not in this source: .*prefill rate/);
  });

  it('the detail lists the last decisions that landed on the worker', async () => {
    const view = fleet([
      { url: 'http://a:1', waiting: 1 },
      { url: 'http://b:1', waiting: 0 },
    ]);
    const rec = (id: string, worker: string, decision: string, matched: number) =>
      adminDecision({
        seq: id.length,
        request_id: id,
        at_ms: NOW,
        decision,
        reason: 'x',
        worker,
        matched_blocks: matched,
        best_worker: 'http://a:1',
        best_matched_blocks: 10,
        cached_tokens: matched * 10,
        ttft_ms: 3,
        duration_ms: 4,
      });
    const c = mount(
      { ...view, recentDecisions: [rec('d-1', 'http://a:1', 'cache_hit', 10), rec('d-22', 'http://b:1', 'cache_worker_queued', 0)] },
      { columns: 120, rows: 40 },
    );
    await tick();
    c.stdin.write('j');
    c.stdin.write('j');
    await settle(() => c.row('›')?.includes('b:1') === true);
    c.stdin.write('\r');
    await settle(() => c.frame().includes('WORKER http://b:1'));
    expect(c.frame()).toMatch(/DECISIONS {2}landed here, newest last/);
    expect(c.frame()).toMatch(/d-22 {2}cache_worker_queued +0\/10 blk \(best a:1 10\) · cached 0 · ttft 3ms/);
    expect(c.frame()).not.toMatch(/d-1 /);
    expect(c.frame()).not.toMatch(/not in this source: .*decisions per worker/);
  });

  it('the detail of a worker from a router that reports no per-worker latency says so', async () => {
    const c = mount(fleet([{ url: 'http://a:1', waiting: 1 }]));
    await tick();
    c.stdin.write('\r');
    await settle(() => c.frame().includes('WORKER http://a:1'));
    expect(c.frame()).toMatch(/not in this source: latency per worker, KV cache usage/);
  });

  it('p pauses the view while data keeps arriving, p again shows the latest', async () => {
    const c = mount(fleet([{ url: 'http://a:1', waiting: 1 }]));
    await tick();
    c.stdin.write('p');
    await tick();
    expect(c.frame()).toMatch(/ PAUSED \d+(ms|\.\ds|s) /); // with the age of the frame on screen
    c.feed.set(fleet([{ url: 'http://a:1', waiting: 5 }]));
    await tick();
    expect(c.row('a:1')).toContain('1/6');
    c.stdin.write('p');
    await tick();
    expect(c.frame()).not.toContain('PAUSED');
    expect(c.row('a:1')).toContain('5/6');
  });

  it('s cycles the sort: waiting, rejections, running, in-flight, sample age, url', async () => {
    const c = mount(
      fleet([
        { url: 'http://b:1', waiting: 1, gate_rejections_total: 90 },
        { url: 'http://c:1', waiting: 8 },
        { url: 'http://a:1', waiting: 0 },
      ]),
    );
    await tick();
    const order = (): string[] =>
      c
        .frame()
        .split('\n')
        .filter((l) => /^[abc]:1 /.test(l))
        .map((l) => l[0]!);
    expect(order()).toEqual(['c', 'b', 'a']);
    expect(c.frame()).toContain('WAITING▼');
    c.stdin.write('s');
    await tick();
    expect(order()).toEqual(['b', 'a', 'c']);
    expect(c.frame()).toContain('sort:rejections');
    // running, in-flight and sample age come next; then the URL.
    for (const next of ['sort:running', 'sort:inflight', 'sort:age']) {
      c.stdin.write('s');
      await tick();
      expect(c.frame()).toContain(next);
    }
    c.stdin.write('s');
    await tick();
    expect(order()).toEqual(['a', 'b', 'c']);
    expect(c.frame()).toContain('WORKER▼');
  });

  it('/ filters workers by URL as you type; Enter keeps it, Esc clears it', async () => {
    const c = mount(fleet([{ url: 'http://w1:1' }, { url: 'http://w2:1' }, { url: 'http://x3:1' }]));
    await tick();
    c.stdin.write('/');
    await tick();
    c.stdin.write('w2');
    await tick();
    expect(c.frame()).toContain('filter: w2');
    expect(c.row('w1:1')).toBeUndefined();
    expect(c.row('w2:1')).toBeDefined();
    c.stdin.write('\r');
    await tick();
    expect(c.frame()).toContain('filter:"w2"');
    expect(c.row('w1:1')).toBeUndefined();
    c.stdin.write('\u001b');
    await settle(() => c.row('w1:1') !== undefined);
    expect(c.row('w1:1')).toBeDefined();
    expect(c.row('x3:1')).toBeDefined();
  });

  it('? opens the help overlay, any key closes it', async () => {
    const c = mount(fleet(undefined));
    await tick();
    c.stdin.write('?');
    await tick();
    expect(c.frame()).toContain('KEYS');
    expect(c.frame()).toContain('pause the view');
    expect(c.frame().split('\n').length).toBeLessThanOrEqual(23);
    c.stdin.write('x');
    await tick();
    expect(c.frame()).not.toContain('KEYS');
    expect(c.frame()).toContain('WORKER');
  });

  it('q quits, and so does Ctrl-C', async () => {
    const c = mount(fleet(undefined));
    await tick();
    c.stdin.write('q');
    await tick();
    expect(c.onQuit).toHaveBeenCalledTimes(1);
    c.stdin.write('\u0003');
    await tick();
    expect(c.onQuit).toHaveBeenCalledTimes(2);
  });

  it('never draws more than 23 lines at 80×24, whatever the state', async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ url: `http://10.0.${Math.floor(i / 10)}.${i}:31000`, waiting: i % 9 }));
    const states: Array<FleetView | undefined> = [
      undefined,
      fleet([]),
      fleet(undefined),
      fleet(many, { allQueued: true, gateInert: true }),
      fleet(many.slice(0, 6), {
        diverted: {
          buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192].map((le, i) => ({ le, count: (i + 1) * 10 })),
          count: 200,
          sum: 9000,
        },
      }),
      mergeReplicas([status('http://rust:29000', snapshotFromPrometheus(prometheusFixture('sgl-router-metrics.txt'), NOW))], NOW),
    ];
    for (const view of states) {
      const c = mount(view);
      await tick();
      for (let i = 0; i < 5; i++) {
        // More snapshots: history grows, charts appear.
        if (view) c.feed.set({ ...view, at: view.at + i });
        await tick();
      }
      for (const f of c.frames) expect(f.split('\n').length).toBeLessThanOrEqual(23);
      c.stdin.write('?');
      await tick();
      expect(c.frame().split('\n').length).toBeLessThanOrEqual(23);
    }
  });

  it('adapts to a resize of the terminal', async () => {
    const stdout = Object.assign(new EventEmitter(), {
      columns: 120,
      rows: 40,
      isTTY: true,
      frames: [] as string[],
      write(s: string) {
        this.frames.push(s);
        return true;
      },
    });
    const stdin = Object.assign(new EventEmitter(), {
      isTTY: false,
      setEncoding() {},
      setRawMode() {},
      resume() {},
      pause() {},
      ref() {},
      unref() {},
      read: () => null,
    });
    const feed = mutableStore<FleetView | undefined>(fleet(Array.from({ length: 12 }, (_, i) => ({ url: `http://w${i}:1`, waiting: i }))));
    const app = inkRender(
      <ConsoleApp feed={feed} onQuit={() => {}} color={false} title="t" target="x" intervalMs={1000} blockSize={16} now={NOW} />,
      {
        stdout: stdout as unknown as NodeJS.WriteStream,
        stdin: stdin as unknown as NodeJS.ReadStream,
        debug: true,
        exitOnCtrlC: false,
        patchConsole: false,
      },
    );
    cleanups.push(() => app.unmount());
    await tick();
    expect(stdout.frames.at(-1)!.split('\n').length).toBeLessThanOrEqual(39);
    expect(stdout.frames.at(-1)).toContain('w11:1');
    stdout.columns = 80;
    stdout.rows = 12;
    stdout.emit('resize');
    await tick();
    const last = stdout.frames.at(-1)!;
    expect(last.split('\n').length).toBeLessThanOrEqual(11);
    for (const line of last.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('with colour off (NO_COLOR) writes no escape code at all; with colour on the charts are coloured', async () => {
    const view = fleet(
      [
        { url: 'http://a:1', waiting: 7 },
        { url: 'http://b:1', waiting: 3 },
      ],
      { allQueued: true, simulated: true },
    );
    const off = mount(view, { color: false, columns: 120, rows: 40 });
    await tick();
    off.feed.set({ ...view, at: view.at + 1 });
    await tick();
    expect(off.frame()).toContain('QUEUES');
    for (const f of off.frames) expect(f).not.toMatch(/\u001b\[/);
    const on = mount(view, { color: true, columns: 120, rows: 40 });
    await tick();
    expect(on.frame()).toMatch(/\u001b\[/);
  });

  it('shows a crashed router (serve) with its exit status and last log lines', async () => {
    const child: ChildState = {
      pid: 4242,
      url: 'http://127.0.0.1:30000',
      phase: 'exited',
      exit: { code: null, signal: 'SIGKILL' },
      crashed: true,
      log: Array.from({ length: 30 }, (_, i) => `line ${i}`),
    };
    const c = mount(fleet(undefined), { child: mutableStore(child) });
    await tick();
    expect(c.frame()).toContain('ROUTER EXITED');
    expect(c.frame()).toContain('signal SIGKILL');
    expect(c.frame()).toContain('line 29');
    expect(c.frame()).toContain('q quit');
    expect(c.frame().split('\n').length).toBeLessThanOrEqual(23);
  });

  it('says what a Prometheus source cannot show, and charts in-flight instead of queues', async () => {
    const p = snapshotFromPrometheus(prometheusFixture('sgl-router-metrics.txt'), NOW);
    const prev = { ...p, at: NOW - 1000, decisions: { ...p.decisions!, cache_hit: p.decisions!.cache_hit - 50 } };
    const view = mergeReplicas([status('http://rust:29000', p, computeRates(prev, p))], NOW);
    const c = mount(view, { columns: 160, rows: 40 });
    await tick();
    c.feed.set({ ...view, at: view.at + 1 });
    await tick();
    expect(c.frame()).toContain('cannot show: engine queues');
    expect(c.frame()).toContain('IN-FLIGHT');
    expect(c.frame()).toContain('DIVERTED OVERLAP');
    expect(c.frame()).toMatch(/cache_hit\s+9\.0k\s+50\.0/);
  });
});

// The admin fixture must also round-trip through the console without surprises.
describe('a real router document', () => {
  it('renders', async () => {
    const doc = JSON.parse(
      (await import('node:fs')).readFileSync(new URL('./fixtures/routerctl-admin-state.json', import.meta.url), 'utf8'),
    );
    const snap = snapshotFromAdmin(doc)!;
    const c = mount(mergeReplicas([status('http://127.0.0.1:34019', snap)], snap.at));
    await tick();
    for (const w of doc.workers) expect(c.frame()).toContain(w.url.replace('http://', ''));
  });
});

describe('events', () => {
  it("top shows the routers' events with their time, newest last, when there is room", async () => {
    const doc = adminDoc({ workers: [{ url: 'http://a:1', waiting: 7 }] });
    const events = [
      { at_ms: NOW - 60_000, kind: 'saturation_begin', worker: null, message: 'every worker is at or over the queue limit 6: all_queued' },
      { at_ms: NOW - 30_000, kind: 'worker_gated', worker: 'http://a:1', message: 'waiting 7 ≥ limit 6' },
    ];
    const c = mount(viewOf({ ...doc, events }), { columns: 200, rows: 60 });
    await tick();
    expect(c.frame()).toContain('EVENTS');
    const gated = c.row('worker gated');
    expect(gated).toMatch(/\d\d:\d\d:\d\d {2}worker gated {2}a:1 {2}waiting 7 ≥ limit 6/);
    const lines = c.frame().split('\n');
    expect(lines.findIndex((l) => l.includes('saturation begin'))).toBeLessThan(lines.findIndex((l) => l.includes('worker gated')));
  });
});

describe('keys', () => {
  it('S turns the sort around, and the column mark says which way', async () => {
    const c = mount(
      fleet([
        { url: 'http://a:1', waiting: 1 },
        { url: 'http://b:1', waiting: 5 },
      ]),
    );
    await tick();
    const order = (): string[] =>
      c
        .frame()
        .split('\n')
        .filter((l) => /^[ab]:1/.test(l))
        .map((l) => l.slice(0, 3));
    expect(order()).toEqual(['b:1', 'a:1']);
    expect(c.frame()).toContain('WAITING▼');
    c.stdin.write('S');
    await tick();
    expect(order()).toEqual(['a:1', 'b:1']);
    expect(c.frame()).toContain('WAITING▲');
  });

  it("says how many workers' counters a stream over its budget left for later, and says nothing once it caught up", async () => {
    const snap = snapshotFromAdmin(adminDoc({ timestamp: NOW }))!;
    const view = mergeReplicas([status('http://127.0.0.1:30000', { ...snap, behind: 3080 })], NOW);
    const c = mount(view, { columns: 200, rows: 40 });
    await tick();
    expect(c.frame()).toContain("3080 workers' counters catching up");
    c.feed.set(mergeReplicas([status('http://127.0.0.1:30000', snap)], NOW + 1000));
    await tick();
    expect(c.frame()).not.toContain('catching up');
  });
});
