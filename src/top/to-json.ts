import { filterWorkers, lastAnswerAgeMs, replicaState, sortWorkers } from '../fleet/index.js';
import type { FleetView, LatencyQuantiles, SortKey } from '../fleet/index.js';

/**
 * `top --json`: the merged fleet in the admin state's vocabulary (the field names of
 * docs/metrics-and-admin.md §Admin state document, `null` where the source cannot
 * tell), plus what merging adds:
 * `replicas` (one entry per --url, with its source, state and the age of its last
 * answer), `inflight_by_replica` per worker,
 * the cache-hit ratio without all_queued, and `cannot_show`.
 */
export function fleetJson(
  view: FleetView,
  o: { sort?: SortKey; filter?: string; reverse?: boolean; now?: number } = {},
): Record<string, unknown> {
  const r = view.router;
  const now = o.now ?? Date.now();
  return {
    router: {
      version: r.version,
      policy: r.policy,
      policy_inferred: r.policyInferred,
      model_id: r.modelId,
      worker_queue_limit: r.workerQueueLimit,
      saturation_queue_floor: r.saturationQueueFloor,
      min_load_choices: r.minLoadChoices,
      uptime_s: r.uptimeS,
      simulated: r.simulated,
      load_freshness_ms: r.loadFreshnessMs,
    },
    // state and last_answer_ms: docs/metrics-and-admin.md §Replica states.
    replicas: view.replicas.map((x) => ({
      url: x.url,
      source: x.source,
      live: x.live,
      error: x.error,
      state: replicaState(x),
      last_answer_ms: lastAnswerAgeMs(x, now),
    })),
    source: view.source,
    // --sort and --filter apply here as in the table; fleet totals stay whole-fleet.
    workers: sortWorkers(filterWorkers(view.workers, o.filter ?? ''), o.sort ?? 'waiting', o.reverse === true).map((w) => ({
      url: w.url,
      healthy: w.healthy,
      breaker: w.breaker,
      waiting: w.waiting,
      running: w.running,
      sample_age_ms: w.sampleAgeMs,
      load_source: w.loadSource,
      fresh: w.fresh,
      gated: w.gated,
      inflight: w.inflight,
      inflight_by_replica: w.inflightByReplica,
      requests_total: w.requestsTotal,
      gate_rejections_total: w.gateRejectionsTotal,
    })),
    decisions: view.decisions,
    cache_hit_ratio: view.hitRatio,
    selection_failures_total: view.selectionFailuresTotal,
    diverted_overlap_blocks: view.diverted,
    alerts: { all_queued: view.alerts.allQueued, gate_inert: view.alerts.gateInert },
    requests_total: view.requestsTotal,
    gate_rejections_total: view.gateRejectionsTotal,
    partial_diversions_total: view.partialDiversionsTotal,
    mismatched: view.mismatched,
    prefix_index: { source: view.prefixIndex.source, replicas_agree: view.prefixIndex.agree, notes: view.prefixIndex.notes },
    latency_seconds: { overall: latencyJson(view.latency.overall) },
    own_counters: (view.router.ownCounters ?? []).map((c) => ({ metric: c.metric, by: c.by, counts: c.counts })),
    cannot_show: view.blind,
    timestamp_ms: view.at,
  };
}

/**
 * Each quantile stays a number (or null), as before; its `_lower_bound` sibling says it
 * lies above the histogram's last finite bound, which is then the number given
 * (docs/metrics-and-admin.md §Console rates).
 */
function latencyJson(l: LatencyQuantiles): Record<string, number | boolean | null> {
  return {
    ttft_p50: l.ttftP50?.value ?? null,
    ttft_p99: l.ttftP99?.value ?? null,
    e2e_p50: l.e2eP50?.value ?? null,
    e2e_p99: l.e2eP99?.value ?? null,
    requests: l.requests,
    ttft_p50_lower_bound: l.ttftP50?.lowerBound ?? false,
    ttft_p99_lower_bound: l.ttftP99?.lowerBound ?? false,
    e2e_p50_lower_bound: l.e2eP50?.lowerBound ?? false,
    e2e_p99_lower_bound: l.e2eP99?.lowerBound ?? false,
  };
}
