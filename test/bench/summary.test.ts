import { describe, expect, it } from 'vitest';
import { percentiles } from '../../src/bench/percentiles.js';
import { summarize } from '../../src/bench/summary.js';
import type { DriverCounts, RequestResult } from '../../src/workload/index.js';

function result(over: Partial<RequestResult>): RequestResult {
  return {
    seq: 0,
    session: 0,
    family: 0,
    turn: 0,
    status: 200,
    error: undefined,
    startedAt: 1000,
    scheduledAt: 0,
    heldMs: 0,
    ttftMs: 10,
    latencyMs: 100,
    itlMs: [5, 5],
    promptTokens: 100,
    cachedTokens: 50,
    completionTokens: 3,
    ...over,
  };
}

const counts: DriverCounts = {
  dispatched: 10,
  sent: 9,
  finished: 9,
  ok: 6,
  failed: 3,
  inflight: 0,
  shed: 1,
  held: 2,
  waiting: 0,
  unsent: 0,
};

describe('percentiles', () => {
  it('uses nearest rank: every figure is a value some request saw', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentiles(values)).toMatchObject({ p50: 50, p90: 90, p99: 99, max: 100, mean: 50.5, count: 100 });
    expect(percentiles([7])).toMatchObject({ p50: 7, p90: 7, p99: 7 });
    expect(percentiles([])).toEqual({ p50: null, p90: null, p99: null, mean: null, max: null, count: 0 });
  });

  it('does not reorder an array it is given', () => {
    const v = [3, 1, 2];
    percentiles(v);
    expect(v).toEqual([3, 1, 2]);
  });
});

describe('summarize', () => {
  const results = [
    result({ ttftMs: 10, latencyMs: 100, startedAt: 1000 }),
    result({ ttftMs: 30, latencyMs: 300, startedAt: 1100, cachedTokens: 0 }),
    result({ ttftMs: 20, latencyMs: 200, startedAt: 1200, promptTokens: 200, cachedTokens: 150 }),
    result({ status: 503, error: 'policy_selection_failed', ttftMs: undefined, itlMs: [], startedAt: 1300 }),
    result({ status: 503, error: 'policy_selection_failed', ttftMs: undefined, itlMs: [], startedAt: 1300 }),
    result({ status: 0, error: 'cut_at_end', ttftMs: undefined, itlMs: [], startedAt: 1400 }),
    result({ status: 200, error: 'stream_error', startedAt: 1400 }),
    // Sent in the warm-up: left out.
    result({ ttftMs: 9999, startedAt: 500 }),
  ];
  const s = summarize({ results, counts, startedAt: 0, warmupMs: 900, sloTtftMs: 2000 });

  it('counts successes, failures by status and by cause, and the warm-up apart', () => {
    expect(s.requests).toMatchObject({ scheduled: 10, sent: 9, ok: 3, failed: 4, shed: 1, held: 2, warmup: 1 });
    expect(s.errors).toEqual({
      total: 4,
      by_status: { '503': 2, '0': 1, '200': 1 },
      by_cause: { policy_selection_failed: 2, cut_at_end: 1, stream_error: 1 },
    });
  });

  it('takes TTFT from every first token (a stream cut later included), other latencies from successes only', () => {
    expect(s.ttft_ms).toMatchObject({ p50: 10, p99: 30, count: 4 });
    expect(s.itl_ms).toMatchObject({ p50: 5, count: 6 });
    expect(s.latency_ms.max).toBe(300);
  });

  it('computes the cached-token ratio over prompt tokens', () => {
    expect(s.cache).toEqual({ prompt_tokens: 400, cached_tokens: 200, ratio: 0.5, requests_with_usage: 3 });
  });

  it('measures throughput from the end of the warm-up to the last finish', () => {
    // Window: 900 → 1400 + 100 = 1500 ms, three successes, nine output tokens.
    expect(s.window_s).toBeCloseTo(0.6, 6);
    expect(s.throughput.requests_per_s).toBeCloseTo(5, 3);
    expect(s.throughput.output_tokens_per_s).toBeCloseTo(15, 1);
  });

  it('has null figures, not zeros, when nothing succeeded', () => {
    const none = summarize({
      results: [result({ status: 503, error: 'x', ttftMs: undefined })],
      counts,
      startedAt: 0,
      warmupMs: 0,
      sloTtftMs: 2000,
    });
    expect(none.ttft_ms.p50).toBeNull();
    expect(none.cache.ratio).toBeNull();
  });

  it.each([
    // [name, results, slo, goodput]: failures count against it, a first token past the SLO too.
    ['all within', [result({ ttftMs: 100 }), result({ ttftMs: 2000 })], 2000, 1],
    ['one past the SLO', [result({ ttftMs: 100 }), result({ ttftMs: 2001 })], 2000, 0.5],
    ['a failure counts against', [result({ ttftMs: 100 }), result({ status: 503, error: 'x', ttftMs: undefined })], 2000, 0.5],
    ['a stream cut after its first token is no good answer', [result({ ttftMs: 50, status: 200, error: 'stream_error' })], 2000, 0],
    ['a tighter SLO', [result({ ttftMs: 100 }), result({ ttftMs: 300 }), result({ ttftMs: 500 })], 250, 0.3333],
  ] as const)('goodput: %s', (_name, rs, slo, want) => {
    const g = summarize({ results: [...rs], counts, startedAt: 0, warmupMs: 0, sloTtftMs: slo }).goodput;
    expect(g).toEqual({ slo_ttft_ms: slo, ratio: want });
  });
});
