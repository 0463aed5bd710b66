import type { Decision } from './decisions.js';
import { ROUTER_FIELDS } from './router-fields.js';
import type { AdminRouter } from './router-fields.js';
import { WORKER_FIELDS } from './worker-fields.js';
import type { AdminWorker, HistogramJson } from './worker-fields.js';

/** The admin API's state document (docs/metrics-and-admin.md §Admin state document). Fields may be added, never renamed. */
export interface AdminState {
  router: AdminRouter;
  workers: AdminWorker[];
  decisions: Record<Decision, number>;
  selection_failures_total: number;
  diverted_overlap_blocks: HistogramJson;
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
  /** Added: the last 100 fleet events, oldest first. */
  events: AdminEvent[];
  /**
   * Added: the router's latency histograms for the served model, cumulative, in the
   * form of `diverted_overlap_blocks` (seconds): time to first streamed token, and end
   * to end. Readers take quantiles over the difference of two documents.
   */
  latency: { ttft_seconds: HistogramJson; duration_seconds: HistogramJson };
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

/**
 * Every field of the document, by object, as data: the console reads with these
 * types and a test holds a live router's document against them, so a field one side
 * writes and the other does not know about fails the suite (docs/metrics-and-admin.md
 * §Admin state document). The router's and a worker's are their tables' keys (the
 * types come from the same tables); `satisfies` keeps the other lists and their types in step.
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
  router: Object.keys(ROUTER_FIELDS) as ReadonlyArray<keyof AdminRouter>,
  worker: Object.keys(WORKER_FIELDS) as ReadonlyArray<keyof AdminWorker>,
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
