/**
 * GET /admin/decisions (docs/decisions.md §Decision record): the router's last routing
 * decisions, one record each. The console, `routerctl explain` and `routerctl doctor`
 * read them with these types.
 */

/** One prefix owner as the selection saw it. */
export interface AdminDecisionCandidate {
  worker: string;
  matched_blocks: number;
  /** Its fresh waiting count then; null without a fresh sample. */
  waiting: number | null;
  /** `gated`: at or over the rule in force (under `slo`: predicted to miss the goal while another was not); `unknown`: no fresh sample (the gate admits it). */
  gate: 'admitted' | 'gated' | 'unknown';
  /** Added: the TTFT this owner was predicted to give the request, its own uncached tokens included, ms; null while its rate is still being learnt. */
  predicted_ttft_ms?: number | null;
}

export interface AdminDecision {
  /** Order of recording, from 1; `since` filters by it. */
  seq: number;
  request_id: string;
  at_ms: number;
  policy: string;
  /** cache_aware's decision label (cache_hit, cache_miss, cache_worker_queued, all_queued); null under other policies. */
  decision: string | null;
  /** The policy's reason (sgl_router_policy_decisions_total's label). */
  reason: string;
  input_tokens: number;
  /** Blocks of the request's prefix key; 0 when it has none. */
  query_blocks: number;
  /** The worker selected. */
  worker: string;
  /** Blocks of the prefix the selected worker held. */
  matched_blocks: number;
  /** The deepest prefix owner (the selected one when tied); null when nobody held any. */
  best_worker: string | null;
  best_matched_blocks: number;
  /** The deepest owners, deepest first, at most 8. */
  candidates: AdminDecisionCandidate[];
  /** Owners beyond those kept. */
  more_candidates: number;
  /** Cache candidates the queue gate turned away. */
  gate_rejected: number;
  /** Candidates hard capacity admission turned away. */
  admission_rejected: number;
  fleet_all_queued: boolean;
  /** Blocks the gate gave up (cache_worker_queued); 0 otherwise. */
  diverted_blocks: number;
  partial_diversion: boolean;
  /** Added: the queue gate's rule in force when the decision was made (auto moves it), e.g. `waiting ≥ 6`; null with the gate off. */
  gate_rule: string | null;
  /**
   * Added: the TTFT the router predicted for the selected worker, ms: its learnt base, this
   * request's uncached tokens over its learnt rate, and the prefill pending ahead at its learnt
   * weight (docs/routing.md §Learned prefill rate); null while the worker's estimate is cold.
   */
  predicted_ttft_ms: number | null;
  /** The worker a retry went to, when the selected one failed first. */
  retried_to: string | null;
  /** null until the request ends. */
  status: number | null;
  /** What the engine reported reusing (usage.prompt_tokens_details.cached_tokens); null when it did not say. */
  cached_tokens: number | null;
  ttft_ms: number | null;
  duration_ms: number | null;
}

export interface AdminDecisions {
  /**
   * The router's --worker-queue-limit as given (null: not set), the value /admin/state's
   * `router.worker_queue_limit` holds, and --block-size, so a record can be read alone;
   * under `auto` and `tokens` the rule in force is each record's `gate_rule`.
   */
  worker_queue_limit: number | null;
  block_size: number;
  /** Added: --queue-gate (docs/routing.md §Gate modes): fixed, auto, tokens or slo. */
  queue_gate_mode: 'fixed' | 'auto' | 'tokens' | 'slo';
  /** Added: --ttft-slo-ms, the goal the slo gate and admission hold predictions to; null when unset. */
  ttft_slo_ms?: number | null;
  /** Records the ring holds (--decision-log-size). */
  capacity: number;
  /** Decisions recorded since start. */
  recorded_total: number;
  /** The ring's fixed memory, in bytes. */
  memory_bytes: number;
  decisions: AdminDecision[];
}
