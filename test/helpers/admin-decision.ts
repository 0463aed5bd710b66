import type { AdminDecision } from '../../src/contract/index.js';

/**
 * A completed decision record as /admin/decisions writes it: a `cache_hit` of 100 prompt
 * tokens in 10 prefix blocks on http://a:1, answered 200; `o` laid on top. For the
 * readers of records (explain's story, doctor's diagnosis, the console's worker detail).
 */
export function adminDecision(o: Partial<AdminDecision> = {}): AdminDecision {
  return {
    seq: 1,
    request_id: 'r',
    at_ms: 0,
    policy: 'cache_aware',
    decision: 'cache_hit',
    reason: 'cache_affinity',
    input_tokens: 100,
    query_blocks: 10,
    worker: 'http://a:1',
    matched_blocks: 0,
    best_worker: null,
    best_matched_blocks: 0,
    candidates: [],
    more_candidates: 0,
    gate_rejected: 0,
    admission_rejected: 0,
    fleet_all_queued: false,
    diverted_blocks: 0,
    partial_diversion: false,
    gate_rule: null,
    predicted_ttft_ms: null,
    retried_to: null,
    status: 200,
    cached_tokens: 0,
    ttft_ms: 1,
    duration_ms: 2,
    ...o,
  };
}
