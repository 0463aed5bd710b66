import { readFileSync } from 'node:fs';
import { mergeReplicas, snapshotFromAdmin } from '../../src/fleet/index.js';
import type { FleetView, ReplicaSnapshot, ReplicaStatus } from '../../src/fleet/index.js';

export const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
export const prometheusFixture = (name: string): string => readFileSync(new URL(`../prometheus/fixtures/${name}`, import.meta.url), 'utf8');

export interface WorkerDoc {
  url: string;
  waiting?: number | null;
  running?: number | null;
  gated?: boolean;
  fresh?: boolean;
  sample_age_ms?: number | null;
  inflight?: number;
  gate_rejections_total?: number;
  breaker?: 'closed' | 'open' | 'half_open';
  healthy?: boolean;
  /** Share of the engine's KV cache in use (absent: an older router). */
  kv_usage?: number | null;
  /** Its learnt prefill rate, as the router writes it (absent: an older router). */
  prefill?: Record<string, number | null>;
  /** The worker's latency histograms, as the router writes them (absent: an older router). */
  latency?: { ttft_seconds: unknown; duration_seconds: unknown };
}

/** An admin state document (docs/metrics-and-admin.md §Admin state document) with sensible defaults; tests override what they assert on. */
export function adminDoc(
  o: {
    limit?: number | null;
    workers?: WorkerDoc[];
    decisions?: Partial<Record<'cache_hit' | 'cache_miss' | 'cache_worker_queued' | 'all_queued', number>>;
    allQueued?: boolean;
    gateInert?: boolean;
    simulated?: boolean;
    diverted?: { buckets: Array<{ le: number; count: number }>; count: number; sum: number };
    timestamp?: number;
    requests?: number;
  } = {},
): Record<string, unknown> {
  const limit = o.limit === undefined ? 6 : o.limit;
  const workers = (
    o.workers ?? [
      { url: 'http://10.0.0.1:31000', waiting: 2 },
      { url: 'http://10.0.0.2:31000', waiting: 0 },
    ]
  ).map((w) => ({
    url: w.url,
    healthy: w.healthy ?? true,
    breaker: w.breaker ?? 'closed',
    waiting: w.waiting === undefined ? 0 : w.waiting,
    running: w.running === undefined ? 4 : w.running,
    sample_age_ms: w.sample_age_ms === undefined ? 120 : w.sample_age_ms,
    fresh: w.fresh ?? true,
    gated: w.gated ?? (limit !== null && (w.waiting ?? 0) >= limit),
    inflight: w.inflight ?? 3,
    requests_total: 100,
    gate_rejections_total: w.gate_rejections_total ?? 0,
    dp_size: 1,
    ...(w.latency ? { latency: w.latency } : {}),
    ...(w.kv_usage !== undefined ? { kv_usage: w.kv_usage } : {}),
    ...(w.prefill !== undefined ? { prefill: w.prefill } : {}),
  }));
  const bounds = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];
  return {
    router: {
      version: '0.1.0',
      policy: 'cache_aware',
      model_id: 'sim-llama',
      worker_queue_limit: limit,
      saturation_queue_floor: null,
      min_load_choices: 2,
      uptime_s: 75,
      simulated: o.simulated ?? false,
      url: 'http://127.0.0.1:30000',
      ready: true,
      load_freshness_ms: 5000,
    },
    workers,
    decisions: { cache_hit: 700, cache_miss: 90, cache_worker_queued: 40, all_queued: 2, ...o.decisions },
    selection_failures_total: 0,
    diverted_overlap_blocks: o.diverted ?? {
      buckets: bounds.map((le) => ({ le, count: le < 8 ? 0 : le < 64 ? 30 : 40 })),
      count: 40,
      sum: 2210,
    },
    alerts: { all_queued: o.allQueued ?? false, gate_inert: o.gateInert ?? false },
    requests_total: o.requests ?? 832,
    gate_rejections_total: workers.reduce((a, w) => a + w.gate_rejections_total, 0),
    partial_diversions_total: 3,
    policy_decisions: {},
    timestamp_ms: o.timestamp ?? 1_700_000_000_000,
  };
}

export function status(url: string, snapshot: ReplicaSnapshot, rates: ReplicaStatus['rates'] = null): ReplicaStatus {
  return { url, source: snapshot.source, live: true, error: null, snapshot, rates, receivedAt: snapshot.at };
}

/** A fleet view of one router replica from an admin document. */
export function viewOf(doc: Record<string, unknown>, url = 'http://127.0.0.1:30000'): FleetView {
  const snap = snapshotFromAdmin(doc)!;
  return mergeReplicas([status(url, snap)], snap.at);
}
