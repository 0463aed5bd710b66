import type { Flavor } from './http/responses.js';

/**
 * Latency histograms with each engine's own default buckets, so a dashboard or an
 * alert written against a real engine reads the simulator unchanged
 * (docs/simulator.md §/metrics).
 */
export interface LatencyBuckets {
  ttft: readonly number[];
  itl: readonly number[];
  e2e: readonly number[];
  /**
   * Time spent waiting for admission. Only vLLM exports it; the SGLang flavour keeps
   * the same series unexported rather than invent buckets SGLang does not document.
   */
  queue: readonly number[];
}

const VLLM_REQUEST_LATENCY = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

export const LATENCY_BUCKETS: Readonly<Record<Flavor, LatencyBuckets>> = {
  sglang: {
    ttft: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400],
    itl: [0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8],
    e2e: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400],
    queue: VLLM_REQUEST_LATENCY,
  },
  vllm: {
    ttft: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560],
    itl: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80],
    e2e: VLLM_REQUEST_LATENCY,
    queue: VLLM_REQUEST_LATENCY,
  },
};

/** A cumulative-on-export histogram: per-bucket counts (last slot above the top bound) and a sum. */
export class Histogram {
  readonly bounds: readonly number[];
  readonly counts: number[];
  sum = 0;

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(v: number): void {
    const b = this.bounds;
    // Most observations land in the first few buckets; a linear scan beats bisection there.
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
  }

  get count(): number {
    let n = 0;
    for (const c of this.counts) n += c;
    return n;
  }
}

/** Counters and histograms an engine rank exports; they only ever grow. */
export interface EngineCounters {
  requestsTotal: number;
  abortedTotal: number;
  /** Requests refused because the queue was full (vLLM's `vllm:admission_rejections_total`). */
  admissionRejectedTotal: number;
  promptTokensTotal: number;
  cachedTokensTotal: number;
  generationTokensTotal: number;
  finishedStopTotal: number;
  finishedLengthTotal: number;
  ttft: Histogram;
  itl: Histogram;
  e2e: Histogram;
  queue: Histogram;
}

export function newEngineCounters(flavor: Flavor): EngineCounters {
  const b = LATENCY_BUCKETS[flavor];
  return {
    requestsTotal: 0,
    abortedTotal: 0,
    admissionRejectedTotal: 0,
    promptTokensTotal: 0,
    cachedTokensTotal: 0,
    generationTokensTotal: 0,
    finishedStopTotal: 0,
    finishedLengthTotal: 0,
    ttft: new Histogram(b.ttft),
    itl: new Histogram(b.itl),
    e2e: new Histogram(b.e2e),
    queue: new Histogram(b.queue),
  };
}
