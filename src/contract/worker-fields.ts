import type { PollFailureReason } from '../engines/index.js';
import type { FieldRow, FieldsOf, JsonKind } from './json-kind.js';
import { boolean, counts, nullable, number, object, oneOf, string } from './json-kind.js';

/**
 * How two readings of a worker field compare, for the router's change check and a
 * stream's delta (docs/metrics-and-admin.md §Stream deltas):
 * - `value`: by value;
 * - `entries`: a flat object (or null), entry by entry;
 * - `whole`: a feed's object, by its JSON; its counters move with every frame, so the
 *   change check takes a worker that has one as changed without comparing;
 * - `apart`: written after the rest of the entry and compared on its own (the sample's
 *   age moves every document; the latency histograms by their counts).
 */
export type FieldCompare = 'value' | 'entries' | 'whole' | 'apart';

export interface WorkerFieldRow<T = unknown> extends FieldRow<T> {
  readonly compare: FieldCompare;
  /** A change of what the worker is rather than of how much it did: a stream sends it before other changes. */
  readonly state: boolean;
}

type Compared = Exclude<FieldCompare, 'apart'>;

function row<T>(
  kind: JsonKind<T>,
  meaning: string,
  how: { compare?: Compared; state?: true } = {},
): WorkerFieldRow<T> & { readonly compare: Compared } {
  const compare = how.compare ?? (kind.json === 'counts' ? 'entries' : 'value');
  return { kind, meaning, compare, state: how.state === true };
}

/** A field written after the rest of the entry. */
function apart<T>(kind: JsonKind<T>, meaning: string): WorkerFieldRow<T> & { readonly compare: 'apart' } {
  return { kind, meaning, compare: 'apart', state: false };
}

/** A latency histogram at the router, cumulative (seconds): as the document's top-level `latency`. */
export interface HistogramJson {
  buckets: Array<{ le: number; count: number }>;
  count: number;
  sum: number;
}

/** A worker's latest failed load poll. */
export interface PollErrorJson {
  reason: PollFailureReason;
  message: string;
  /** Wall-clock epoch ms. */
  at_ms: number;
}

/** A worker's load channel, when its engine advertises one (docs/engine-load.md §Load by push). */
export interface LoadPushJson {
  endpoints: string[];
  frames_total: number;
  decode_errors_total: number;
  /** Frames lost to sequence gaps (load has no replay: the next frame supersedes them). */
  missed_total: number;
  /** Publisher restarts seen (the sequence went back to 0). */
  resets_total: number;
  last_error: string | null;
}

/** A worker's prefill rate as the router learnt it (docs/routing.md §Learned prefill rate). */
export interface PrefillJson {
  /** Prompt tokens it prefills per second; null while cold (too few samples, or too little spread in their sizes). */
  tokens_per_second: number | null;
  /** TTFT at zero tokens, ms; null while cold. */
  base_ms: number | null;
  /** What each token of prefill pending ahead adds to TTFT, ms (0 until learnt); null while cold. */
  ahead_ms_per_token: number | null;
  /** Samples the estimate reads (at most 128). */
  samples: number;
  /** Uncached prompt tokens this router sent it whose first byte has not come, as the router counts them. */
  pending_tokens: number;
  /** The engine's prompt tokens per token of the router's count, from its usage (1 until it says). */
  token_scale: number;
}

/** A worker's KV event feeds, when the prefix index is built from them (docs/routing.md §Prefix from engine events). */
export interface KvEventsJson {
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
  /** The replay sockets, one per rank; empty when none is known (then a late start begins empty). */
  replay_endpoints: string[];
  /** Where the replay endpoints came from (the kv_events descriptor, the engine's kv_events_config, a --kv-events entry). */
  replay_from: 'descriptor' | 'kv_events_config' | 'config' | null;
  /** Tokens per block of this worker's events, as it advertises them. */
  block_size: number;
  /** How the feed caught up with what the engine published before the router subscribed (docs/engine-push.md §Catching up). */
  catch_up: 'pending' | 'complete' | 'partial' | 'failed' | 'none';
  /** Batches published before the router subscribed that it never got. */
  catch_up_missed_batches: number;
  /** Seconds since the engine stamped the last batch applied (grows while the engine is idle); null before the first. */
  lag_seconds: number | null;
  /** One line for an operator when the index of this worker is or may be incomplete; null when nothing is amiss. */
  note: string | null;
  last_error: string | null;
}

/**
 * A worker's entry in /admin/state (docs/metrics-and-admin.md §workers array), one row
 * per field, in the order the router writes them. The rest is derived from it:
 * AdminWorker, the audit's field list, the router's writer and change check, a
 * stream's delta, the console's reader and the docs' table. A new field is a row here
 * and its reading in the router (router/server/admin-state.ts workerFields), which the
 * compiler asks for.
 */
export const WORKER_FIELDS = {
  url: row(string, 'worker URL'),
  healthy: row(
    boolean,
    'its breaker would let a request through now and its load polls are answered (false while the breaker cools down, while its half-open probe is out, or while `load_unreachable`)',
    { state: true },
  ),
  breaker: row(oneOf('closed', 'open', 'half_open'), '`closed`, `open`, `half_open`', { state: true }),
  waiting: row(nullable(number), 'engine-reported waiting requests, summed over DP ranks; null without a fresh sample'),
  running: row(nullable(number), 'engine-reported running requests, summed; null without a fresh sample'),
  queued_tokens: row(
    nullable(number),
    "engine-reported prompt tokens waiting to be prefilled (SGLang's `num_waiting_uncached_tokens`), summed over DP ranks: what `--queue-gate tokens` compares with `--queue-gate-tokens`; null without a fresh sample or when the engine does not report them (vLLM)",
  ),
  kv_usage: row(
    nullable(number),
    "the share of the engine's KV cache in use, used over capacity tokens summed over its ranks, from the fresh sample; null without one or when the engine does not report its capacity",
  ),
  sample_at_ms: row(
    nullable(number),
    "when the last complete sample was taken, epoch ms as the router's monotonic clock counts from its start (it stands still while the sample does, and may drift from `timestamp_ms` by the wall clock's adjustments since); null while there is none. A stream's delta carries this, not the age",
  ),
  fresh: row(boolean, 'the sample is complete and within `load_freshness_ms` (docs/routing.md §Fresh load)', { state: true }),
  gated: row(boolean, 'the queue gate would reject it now: a rule in force, a fresh sample, and at or over the rule', { state: true }),
  inflight: row(number, 'router-local requests in flight to it'),
  requests_total: row(number, 'attempts sent to it (retries included)'),
  gate_rejections_total: row(number, 'times the gate rejected it as a cache candidate'),
  prefill: row(
    object<PrefillJson>(),
    "its prefill rate as learnt from the streamed requests it served with nothing waiting (docs/routing.md §Learned prefill rate): `tokens_per_second` and `base_ms` (TTFT ≈ base_ms + uncached tokens / tokens_per_second; null while cold: fewer than 12 samples sent with nothing pending, or their prompt sizes within 2× of each other), `ahead_ms_per_token` (what each token of prefill pending ahead adds: about 1 / tokens_per_second where the engine batches prefills, 0 where it times each alone; 1 / tokens_per_second until 8 samples were sent behind some), `samples` (at most 128), `pending_tokens` (uncached prompt tokens sent it whose first byte has not come, the router's count), `token_scale` (the engine's prompt tokens per token of the router's count, the median of the last 15 its usage said; 1 until then)",
    { compare: 'entries' },
  ),
  dp_size: row(nullable(number), 'DP ranks it advertised in `/server_info`, when known'),
  load_poll_failures_total: row(number, 'load polls that produced no sample'),
  load_poll_failures: row(
    counts<PollFailureReason>(),
    'the same by cause: `connect`, `http_status`, `timeout`, `too_large`, `unreadable` (docs/engine-load.md §Poll failures)',
  ),
  last_poll_error: row(
    nullable(object<PollErrorJson>()),
    'latest failed poll: `reason`, `message`, `at_ms` (wall-clock epoch ms); null if none failed yet',
    {
      compare: 'entries',
    },
  ),
  load_poll_unanswered: row(number, 'polls in a row with no answer at all (timeout, connect); 0 once it answers'),
  load_unreachable: row(boolean, 'out of the pool because its polls go unanswered (docs/engine-load.md); then `healthy` is false', {
    state: true,
  }),
  load_source: row(
    oneOf('push', 'poll'),
    '`push` while every rank of the engine pushes `LoadStat`, else `poll` (docs/engine-load.md §Load by push)',
    {
      state: true,
    },
  ),
  load_push: row(
    nullable(object<LoadPushJson>()),
    "the worker's load channel when its engine advertises one: `endpoints` (one per rank), `frames_total`, `decode_errors_total`, `missed_total` (frames lost to sequence gaps), `resets_total` (publisher restarts), `last_error`",
    { compare: 'whole' },
  ),
  kv_events: row(
    nullable(object<KvEventsJson>()),
    "the worker's KV event feeds when the prefix index is built from them (docs/routing.md §Prefix from engine events): `endpoints` (one per rank), `endpoints_from` (`engine`: its /server_info; `config`: a `--kv-events` entry), `keying` (`engine_hash`: the events' hashes are the keys; `tokens`: blocks keyed by the tokens they carry, for vLLM), `unplaced_blocks_total` and `unkeyed_blocks_total` (keyed by tokens: blocks whose parent the router never saw; blocks that are not plain tokens at the worker's block size), `batches_total`, `events_total`, `skipped_events_total` (events it could not read), `decode_errors_total` (batches it could not read), `gaps_total`, `missed_total`, `repaired_total` (from the replay socket), `lost_total` (missed and not repaired), `resets_total` (publisher restarts), `replayed_at_start_total` (batches replayed when the router subscribed), `replay_endpoints` (one per rank; empty when none is known) and `replay_from` (`descriptor`, `kv_events_config`, `config`, or null), `block_size` (tokens per block of this worker's events, as it advertises them), `catch_up` (`complete`, `partial`, `failed`, `pending` or `none`, as `sgl_router_kv_event_catch_up`) and `catch_up_missed_batches` (batches published before the router subscribed that it never got), `lag_seconds` (as `sgl_router_kv_event_lag_seconds`; null before the first batch), `note` (one line when this worker's part of the index is or may be incomplete: a partial or failed catch-up, or no replay endpoint, where a router replica started later begins empty; null otherwise), `last_error`",
    { compare: 'whole' },
  ),
  sample_age_ms: apart(nullable(number), 'age of the last sample, fresh or stale, rounded; null while there is no complete sample'),
  latency: apart(
    object<{ ttft_seconds: HistogramJson; duration_seconds: HistogramJson }>(),
    "this worker's `ttft_seconds` and `duration_seconds` histograms at the router, cumulative, in the form of the top-level `latency` (the console's drill-down; not in `/metrics`)",
  ),
} as const satisfies Readonly<Record<string, WorkerFieldRow>>;

/** A worker's entry in /admin/state. */
export type AdminWorker = FieldsOf<typeof WORKER_FIELDS>;

/** The keys written after the rest of the entry (`compare: 'apart'`). */
type ApartKey = {
  [K in keyof typeof WORKER_FIELDS]: (typeof WORKER_FIELDS)[K]['compare'] extends 'apart' ? K : never;
}[keyof typeof WORKER_FIELDS];

/** A worker's entry but the fields written apart: what the router reads of a worker for each document. */
export type WorkerFields = Omit<AdminWorker, ApartKey>;

/** The table's rows as entries, for code that walks them. */
export const WORKER_FIELD_ROWS: ReadonlyArray<readonly [keyof AdminWorker, WorkerFieldRow]> = Object.entries(WORKER_FIELDS) as Array<
  [keyof AdminWorker, WorkerFieldRow]
>;
