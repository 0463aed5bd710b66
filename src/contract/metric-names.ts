/**
 * The metric families a router's `/metrics` publishes, in the order it renders them
 * (docs/metrics-and-admin.md §Metric families). The router registers its families
 * under these names and the console and bench look them up by them, so a rename is
 * one edit here and a dashboard-visible change; the strings are the Rust sgl-router's
 * where it has the metric, and must not change on their own.
 */
export const METRIC_NAMES = Object.freeze({
  requests: 'sgl_router_requests_total',
  responses: 'sgl_router_responses_total',
  workerRequests: 'sgl_router_worker_requests_total',
  requestDuration: 'sgl_router_request_duration_seconds',
  ttft: 'sgl_router_ttft_seconds',
  streamOutcomes: 'sgl_router_stream_outcome_total',
  workers: 'sgl_router_workers',
  workerHealth: 'sgl_router_worker_health',
  workerBreakerState: 'sgl_router_worker_cb_state',
  workerInflight: 'sgl_router_worker_inflight_requests',
  workerWaiting: 'sgl_router_worker_waiting_requests',
  workerSampleAge: 'sgl_router_worker_load_sample_age_seconds',
  workerPrefillRate: 'sgl_router_worker_prefill_tokens_per_second',
  loadPollFailures: 'sgl_router_load_poll_failures_total',
  policyDecisions: 'sgl_router_policy_decisions_total',
  selectionFailures: 'sgl_router_policy_selection_failures_total',
  cacheDecisions: 'sgl_router_cache_aware_decisions_total',
  divertedOverlap: 'sgl_router_diverted_overlap_blocks',
  predictionError: 'sgl_router_prefix_prediction_error_tokens',
  decisionMatchedBlocks: 'sgl_router_decision_matched_blocks',
  gateRejected: 'sgl_router_queue_gate_rejected_total',
  partialDiversions: 'sgl_router_partial_diversions_total',
  queueGateInert: 'sgl_router_queue_gate_inert',
  admissionEvaluated: 'sgl_router_cache_admission_evaluated_total',
  admissionRejected: 'sgl_router_cache_admission_rejected_total',
  guardCompared: 'sgl_router_cache_pressure_guard_compared_total',
  guardOverrides: 'sgl_router_cache_pressure_guard_override_total',
  monitorDecisions: 'sgl_router_cache_monitor_decisions_total',
  retries: 'sgl_router_retries_total',
  prefixIndexBlocks: 'sgl_router_prefix_index_blocks',
  prefixIndexEvictions: 'sgl_router_prefix_index_evictions_total',
  prefixUnkeyedRequests: 'sgl_router_prefix_unkeyed_requests_total',
  shedRequests: 'sgl_router_shed_requests_total',
  heldRequests: 'sgl_router_held_requests',
  eppPickDuration: 'sgl_router_epp_pick_duration_seconds',
  kvEventBatches: 'sgl_router_kv_event_batches_total',
  kvEventGaps: 'sgl_router_kv_event_gaps_total',
  kvEventDecodeErrors: 'sgl_router_kv_event_decode_errors_total',
  kvEventLag: 'sgl_router_kv_event_lag_seconds',
  kvEventCatchUp: 'sgl_router_kv_event_catch_up',
} as const);

export type MetricName = (typeof METRIC_NAMES)[keyof typeof METRIC_NAMES];

/** Every family above starts with it; a page without one is not a router's. */
export const ROUTER_METRIC_PREFIX = 'sgl_router_';
