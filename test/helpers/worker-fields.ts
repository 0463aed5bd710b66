import type { WorkerFields } from '../../src/contract/index.js';

/**
 * One worker's entry in /admin/state as the router writes it, for tests of the writer,
 * the change check and the stream's deltas: a polled, healthy, fresh worker, with
 * `over` laid on top.
 */
export const workerFields = (url: string, over: Partial<WorkerFields> = {}): WorkerFields => ({
  url,
  healthy: true,
  breaker: 'closed',
  waiting: 1,
  running: 2,
  queued_tokens: 640,
  kv_usage: 0.25,
  sample_at_ms: 1_000,
  fresh: true,
  gated: false,
  inflight: 0,
  requests_total: 5,
  gate_rejections_total: 0,
  prefill: { tokens_per_second: 21_500, base_ms: 6.2, ahead_ms_per_token: 0.046, samples: 40, pending_tokens: 0, token_scale: 1 },
  dp_size: null,
  load_poll_failures_total: 0,
  load_poll_failures: { connect: 0, http_status: 0, timeout: 0, too_large: 0, unreadable: 0 },
  last_poll_error: null,
  load_poll_unanswered: 0,
  load_unreachable: false,
  load_source: 'poll',
  load_push: null,
  kv_events: null,
  ...over,
});
