import type { PollFailureReason } from '../engines/index.js';
import type { Decision } from './decisions.js';

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
    /** Added: tokens per prefix block, so the console can turn diverted blocks into tokens. */
    block_size: number;
    /** Added: --queue-gate (docs/routing.md §Gate modes). */
    queue_gate_mode: 'fixed' | 'auto' | 'tokens';
    /** Added: the waiting count at or over which a worker is queued now (auto moves it); null in tokens mode or with the gate off. */
    queue_gate_limit: number | null;
    /** Added: --queue-gate-tokens, in tokens mode; otherwise null. */
    queue_gate_tokens: number | null;
    /** Added: the rule in force, as explain and the console say it; null with the gate off. */
    queue_gate_rule: string | null;
  };
  workers: AdminWorker[];
  decisions: Record<Decision, number>;
  selection_failures_total: number;
  diverted_overlap_blocks: { buckets: Array<{ le: number; count: number }>; count: number; sum: number };
  alerts: { all_queued: boolean; gate_inert: boolean };
  /** Added: totals for rates and the console. */
  requests_total: number;
  gate_rejections_total: number;
  partial_diversions_total: number;
  policy_decisions: Record<string, number>;
  /**
   * Added: the prefix index (docs/routing.md §Prefix from engine events): what it is
   * built from, its size, and a digest of every (block, owner) pair with owners named
   * by worker URL and DP rank, so that replicas fed by the same engines can be
   * compared. Recomputed at most once a second.
   */
  prefix_index: {
    source: 'requests' | 'events';
    /**
     * Added: how requests are keyed: `text` (byte chunks of the prompt, token ids in
     * blocks), `tokens` (the engines' tokens, named as the engines name their blocks),
     * or `token_ids` (as `tokens`, but with no tokenizer: only token-id requests are keyed).
     */
    keyed_by: 'text' | 'tokens' | 'token_ids';
    blocks: number;
    owner_pairs: number;
    digest: string;
    /** Added: requests routed without prefix affinity because they could not be keyed, by reason. */
    unkeyed_requests: { no_tokenizer: number; unsupported_input: number };
  };
  /**
   * Added: the router's latency histograms for the served model, cumulative, in the
   * form of `diverted_overlap_blocks` (seconds): time to first streamed token, and end
   * to end. Readers take quantiles over the difference of two documents.
   */
  /** Added: the last 100 fleet events, oldest first. */
  events: AdminEvent[];
  latency: {
    ttft_seconds: { buckets: Array<{ le: number; count: number }>; count: number; sum: number };
    duration_seconds: { buckets: Array<{ le: number; count: number }>; count: number; sum: number };
  };
  timestamp_ms: number;
}

/** What an event in /admin/state is about (docs/metrics-and-admin.md §Events). */
export type AdminEventKind =
  | 'saturation_begin'
  | 'saturation_end'
  | 'worker_gated'
  | 'worker_released'
  | 'breaker_open'
  | 'breaker_half_open'
  | 'breaker_closed'
  | 'worker_unreachable'
  | 'worker_reachable'
  | 'load_push'
  | 'load_poll'
  | 'router_started'
  | 'diversion_burst'
  | 'diversion_burst_end'
  | 'worker_added'
  | 'worker_admitted'
  | 'worker_removed';

export interface AdminEvent {
  /** Wall-clock epoch ms. */
  at_ms: number;
  kind: AdminEventKind;
  /** The worker URL it is about; null for the fleet. */
  worker: string | null;
  message: string;
}

export interface AdminWorker {
  url: string;
  healthy: boolean;
  breaker: 'closed' | 'open' | 'half_open';
  waiting: number | null;
  running: number | null;
  sample_age_ms: number | null;
  /**
   * Added: when the last complete sample was taken, epoch ms as the router's monotonic
   * clock counts from its start (so it does not move while the sample stands); null
   * while there is none. A delta on /admin/stream carries this, not the age.
   */
  sample_at_ms: number | null;
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
  /** Added: where the worker's load comes from now: the engine's LoadStat push, or HTTP polls (docs/engine-load.md §Load by push). */
  load_source: 'push' | 'poll';
  /** Added: the worker's load channel when its engine advertises one, else null. */
  load_push: {
    endpoints: string[];
    frames_total: number;
    decode_errors_total: number;
    /** Frames lost to sequence gaps (load has no replay: the next frame supersedes them). */
    missed_total: number;
    /** Publisher restarts seen (the sequence went back to 0). */
    resets_total: number;
    last_error: string | null;
  } | null;
  /** Added: the share of the engine's KV cache in use (used / capacity tokens, summed over ranks) from the fresh sample; null when unknown. */
  kv_usage: number | null;
  /** Added: this worker's latency histograms at the router, cumulative, as the top-level `latency`. */
  latency: {
    ttft_seconds: { buckets: Array<{ le: number; count: number }>; count: number; sum: number };
    duration_seconds: { buckets: Array<{ le: number; count: number }>; count: number; sum: number };
  };
  /** Added: the worker's KV event feeds, when the prefix index is built from them, else null. */
  kv_events: {
    endpoints: string[];
    /** Where the endpoints came from: the engine's /server_info, or a --kv-events entry. */
    endpoints_from: 'engine' | 'config';
    /** `engine_hash`: the events' hashes are the index keys; `tokens`: blocks are keyed by the tokens they carry (vLLM). */
    keying: 'engine_hash' | 'tokens';
    /** Keyed by tokens: stored blocks whose parent the router never saw (stored before it subscribed). */
    unplaced_blocks_total: number;
    /** Keyed by tokens: stored blocks that are not plain token blocks of --block-size (a LoRA, images, a salt). */
    unkeyed_blocks_total: number;
    batches_total: number;
    events_total: number;
    skipped_events_total: number;
    decode_errors_total: number;
    gaps_total: number;
    missed_total: number;
    repaired_total: number;
    lost_total: number;
    resets_total: number;
    /** Batches the replay socket gave back when the router subscribed (what the engine published before). */
    replayed_at_start_total: number;
    /** Added: the replay sockets, one per rank; empty when none is known (then a late start begins empty). */
    replay_endpoints: string[];
    /** Added: where the replay endpoints came from (the kv_events descriptor, the engine's kv_events_config, a --kv-events entry). */
    replay_from: 'descriptor' | 'kv_events_config' | 'config' | null;
    /** Added: tokens per block of this worker's events, as it advertises them. */
    block_size: number;
    /**
     * Added: how the feed caught up with what the engine published before the router
     * subscribed (docs/engine-push.md §Catching up): complete, partial (the replay
     * buffer had rolled over), failed, pending, or none (no replay socket).
     */
    catch_up: 'pending' | 'complete' | 'partial' | 'failed' | 'none';
    /** Added: batches published before the router subscribed that it never got. */
    catch_up_missed_batches: number;
    /** Added: seconds since the engine stamped the last batch applied (grows while the engine is idle); null before the first. */
    lag_seconds: number | null;
    /** Added: one line for an operator when the index of this worker is or may be incomplete; null when nothing is amiss. */
    note: string | null;
    last_error: string | null;
  } | null;
}

export type AdminRouter = AdminState['router'];

/**
 * Every field of the document, by object, as data: the console reads with these
 * types and a test holds a live router's document against them, so a field one side
 * writes and the other does not know about fails the suite (docs/metrics-and-admin.md
 * §Admin state document). `satisfies` keeps the lists and the types in step.
 */
export const ADMIN_STATE_FIELDS = {
  top: [
    'router',
    'workers',
    'decisions',
    'selection_failures_total',
    'diverted_overlap_blocks',
    'alerts',
    'requests_total',
    'gate_rejections_total',
    'partial_diversions_total',
    'policy_decisions',
    'prefix_index',
    'events',
    'latency',
    'timestamp_ms',
  ],
  router: [
    'version',
    'policy',
    'model_id',
    'worker_queue_limit',
    'saturation_queue_floor',
    'min_load_choices',
    'uptime_s',
    'simulated',
    'url',
    'ready',
    'load_freshness_ms',
    'block_size',
    'queue_gate_mode',
    'queue_gate_limit',
    'queue_gate_tokens',
    'queue_gate_rule',
  ],
  worker: [
    'url',
    'healthy',
    'breaker',
    'waiting',
    'running',
    'sample_age_ms',
    'sample_at_ms',
    'fresh',
    'gated',
    'inflight',
    'requests_total',
    'gate_rejections_total',
    'dp_size',
    'load_poll_failures_total',
    'load_poll_failures',
    'last_poll_error',
    'load_poll_unanswered',
    'load_unreachable',
    'load_source',
    'load_push',
    'kv_events',
    'latency',
    'kv_usage',
  ],
  alerts: ['all_queued', 'gate_inert'],
} as const satisfies {
  top: ReadonlyArray<keyof AdminState>;
  router: ReadonlyArray<keyof AdminRouter>;
  worker: ReadonlyArray<keyof AdminWorker>;
  alerts: ReadonlyArray<keyof AdminState['alerts']>;
};

// The other direction: a key the type has and the list lacks is a compile error here.
type Missing<T, L extends ReadonlyArray<PropertyKey>> = Exclude<keyof T, L[number]>;
type None<T extends never> = T;
export type AdminFieldListsComplete = [
  None<Missing<AdminState, typeof ADMIN_STATE_FIELDS.top>>,
  None<Missing<AdminRouter, typeof ADMIN_STATE_FIELDS.router>>,
  None<Missing<AdminWorker, typeof ADMIN_STATE_FIELDS.worker>>,
  None<Missing<AdminState['alerts'], typeof ADMIN_STATE_FIELDS.alerts>>,
];

/** Fields of `doc` the contract does not name, and contract fields `doc` lacks, as dotted paths. */
export function auditAdminDocument(doc: unknown): { unknown: string[]; missing: string[] } {
  const unknown: string[] = [];
  const missing: string[] = [];
  const check = (obj: unknown, fields: readonly string[], at: string): void => {
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      missing.push(at === '' ? '(document)' : at);
      return;
    }
    for (const f of fields) if (!(f in obj)) missing.push(`${at}${f}`);
    for (const k of Object.keys(obj)) if (!fields.includes(k)) unknown.push(`${at}${k}`);
  };
  check(doc, ADMIN_STATE_FIELDS.top, '');
  const d = doc as Partial<Record<keyof AdminState, unknown>> | null;
  if (d && typeof d === 'object') {
    check(d.router, ADMIN_STATE_FIELDS.router, 'router.');
    check(d.alerts, ADMIN_STATE_FIELDS.alerts, 'alerts.');
    if (Array.isArray(d.workers)) d.workers.forEach((w, i) => check(w, ADMIN_STATE_FIELDS.worker, `workers[${i}].`));
  }
  return { unknown, missing };
}
