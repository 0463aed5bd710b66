import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { histogramQuantile, readRouterCounters, counterDelta } from '../../src/bench/router-counters.js';
import type { CumulativeHistogram } from '../../src/bench/router-counters.js';
import { runAgainst } from '../../src/bench/run.js';
import type { Router } from '../../src/router/index.js';
import { startSimProcess } from '../../src/bench/fleet-processes.js';
import type { StartedProcess } from '../../src/bench/fleet-processes.js';
import { DEFAULT_WORKLOAD } from '../../src/workload/index.js';
import { startTestRouter } from '../helpers/router.js';

describe('histogramQuantile', () => {
  const h: CumulativeHistogram = { le: [0.1, 0.2, 0.4, 1], counts: [0, 10, 30, 40], total: 40 };
  it.each([
    ['the median, inside the (0.2, 0.4] bucket', 0.5, 0.3],
    ['a quantile at a bucket edge', 0.25, 0.2],
    ['the lowest rank, inside the first non-empty bucket', 0.05, 0.12],
    ['the top quantile', 1, 1],
  ])('%s', (_name, q, expected) => {
    expect(histogramQuantile(h, q)).toBeCloseTo(expected, 6);
  });
  it('says what is above the highest finite bound as that bound', () => {
    expect(histogramQuantile({ le: [0.1], counts: [1], total: 10 }, 0.9)).toBe(0.1);
  });
  it('has no quantile without observations', () => {
    expect(histogramQuantile({ le: [0.1], counts: [0], total: 0 }, 0.5)).toBeNull();
  });
  it('subtracts the scrape before the run', () => {
    const text = (n: number) => `# TYPE sgl_router_ttft_seconds histogram
sgl_router_ttft_seconds_bucket{model_id="m",le="0.1"} ${n}
sgl_router_ttft_seconds_bucket{model_id="m",le="+Inf"} ${2 * n}
sgl_router_ttft_seconds_sum{model_id="m"} 1
sgl_router_ttft_seconds_count{model_id="m"} ${2 * n}
# TYPE sgl_router_requests_total counter
sgl_router_requests_total{route="/v1/chat/completions",method="POST"} ${n}
`;
    const d = counterDelta(readRouterCounters(text(3)), readRouterCounters(text(10))!);
    expect(d.ttft).toEqual({ le: [0.1], counts: [7], total: 14 });
  });
});

/**
 * The client's TTFT and the router's own sgl_router_ttft_seconds must tell the same
 * story on a saturated fleet: the engines send nothing before the first token, so
 * the first byte the router relays is the first token the client sees.
 */
describe('TTFT at the client and at the router agree on a saturated run', () => {
  let fleet: StartedProcess<string[]>;
  let router: Router;
  beforeAll(async () => {
    // Two small engines and more arrivals than they can serve: queues grow for the whole
    // run. The engines run in their own process (the built binary), as they would on
    // other machines, so their work does not delay the router's or the client's clocks.
    fleet = await startSimProcess({ workers: 2, maxRunning: 4, speedup: 0.5, kvBlocks: 8192, flavor: 'sglang', seed: 7 });
    router = await startTestRouter(fleet.value, { workerQueueLimit: 4 });
  }, 30_000);
  afterAll(async () => {
    await router?.close();
    await fleet?.process.stop({ killAfterMs: 2000 });
  });

  it('medians within 20 %', async () => {
    const ttfts: number[] = [];
    const run = await runAgainst(
      router.url,
      {
        workload: { ...DEFAULT_WORKLOAD, rate: 60, burstFactor: 1, outputMedianTokens: 32, outputMaxTokens: 64 },
        durationMs: 6000,
        graceMs: 8000,
        warmupMs: 0,
        timeoutMs: 30_000,
        maxInFlight: 512,
        model: undefined,
      },
      { onResult: (r) => void (r.ttftMs !== undefined && ttfts.push(r.ttftMs)) },
    );
    const client = run.summary.ttft_ms.p50;
    const atRouter = run.router?.ttft ? histogramQuantile(run.router.ttft, 0.5) : null;
    expect(client).not.toBeNull();
    expect(atRouter).not.toBeNull();
    const routerMs = atRouter! * 1000;
    // Saturated: the median waits in a queue, far above the router's own overhead.
    expect(routerMs).toBeGreaterThan(200);
    // What bench prints: the client's exact median beside the router's, interpolated in
    // its buckets. Buckets here are up to twice as wide as their lower bound, so the
    // like-for-like check puts the client's own TTFTs in the same buckets first.
    const h = run.router!.ttft!;
    const clientInRouterBuckets =
      histogramQuantile({ le: h.le, counts: h.le.map((le) => ttfts.filter((t) => t / 1000 <= le).length), total: ttfts.length }, 0.5)! *
      1000;
    const msg = `client ${client} ms (${Math.round(clientInRouterBuckets)} ms in the router's buckets), router ${Math.round(routerMs)} ms`;
    expect(Math.abs(clientInRouterBuckets - routerMs) / routerMs, msg).toBeLessThanOrEqual(0.2);
    // And the exact client median lies in the router's bucket of its own median.
    const bucket = h.le.findIndex((le) => le * 1000 >= routerMs);
    expect(client!, msg).toBeGreaterThanOrEqual((h.le[bucket - 1] ?? 0) * 1000 * 0.8);
    expect(client!, msg).toBeLessThanOrEqual(h.le[bucket]! * 1000 * 1.2);
  }, 40_000);
});
