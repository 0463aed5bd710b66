import type { SubmitResult } from '../sim/index.js';

type RefusalReason = Extract<SubmitResult, { ok: false }>['reason'];

/**
 * Refusals by the engine's reason: too long for the model's context, too long for the
 * KV pool, or a full waiting queue (docs/simulator.md §Refusals for length). A report
 * that counts only their sum blames the cache for what the context length did.
 */
export interface RefusalCounts {
  contextLength: number;
  kvCapacity: number;
  queueFull: number;
}

export function emptyRefusalCounts(): RefusalCounts {
  return { contextLength: 0, kvCapacity: 0, queueFull: 0 };
}

/** Book one refusal in a run's total and under its reason. */
export function countRefusal(
  result: { refused: number; refusedBy: RefusalCounts },
  reason: RefusalReason | 'injected_failure' | 'bad_rank',
): void {
  result.refused++;
  if (reason === 'context_length') result.refusedBy.contextLength++;
  else if (reason === 'kv_capacity') result.refusedBy.kvCapacity++;
  else if (reason === 'queue_full') result.refusedBy.queueFull++;
}
