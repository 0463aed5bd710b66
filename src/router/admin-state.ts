import type { PollFailureReason } from '../engines/index.js';

/** The admin API's state document (docs/metrics-and-admin.md §Admin state document). Fields may be added, never renamed. */
export interface AdminState {
  router: {
    version: string;
    policy: string;
    model_id: string | null;
    worker_queue_limit: number | null;
    saturation_queue_floor: number | null;
    min_load_choices: number;
    uptime_s: number;
    simulated: boolean;
    /** Added: where the router listens, and whether it is draining. */
    url: string;
    ready: boolean;
    load_freshness_ms: number;
  };
  workers: AdminWorker[];
  decisions: Record<'cache_hit' | 'cache_miss' | 'cache_worker_queued' | 'all_queued', number>;
  selection_failures_total: number;
  diverted_overlap_blocks: { buckets: Array<{ le: number; count: number }>; count: number; sum: number };
  alerts: { all_queued: boolean; gate_inert: boolean };
  /** Added: totals for rates and the console. */
  requests_total: number;
  gate_rejections_total: number;
  partial_diversions_total: number;
  policy_decisions: Record<string, number>;
  timestamp_ms: number;
}

export interface AdminWorker {
  url: string;
  healthy: boolean;
  breaker: 'closed' | 'open' | 'half_open';
  waiting: number | null;
  running: number | null;
  sample_age_ms: number | null;
  fresh: boolean;
  gated: boolean;
  inflight: number;
  requests_total: number;
  gate_rejections_total: number;
  /** Added: DP ranks the worker advertised, when known. */
  dp_size: number | null;
  /** Added: load polls that produced no sample, in total and by cause (docs/engine-load.md, "Poll failures"). */
  load_poll_failures_total: number;
  load_poll_failures: Record<PollFailureReason, number>;
  /** Added: the latest failed load poll (any cause), or null if none failed yet; `at_ms` is wall-clock epoch ms. */
  last_poll_error: { reason: PollFailureReason; message: string; at_ms: number } | null;
  /** Added: load polls in a row that got no answer at all (timeout, connect); 0 once the engine answers. */
  load_poll_unanswered: number;
  /** Added: out of the pool because its load polls go unanswered (then `healthy` is false). */
  load_unreachable: boolean;
}
