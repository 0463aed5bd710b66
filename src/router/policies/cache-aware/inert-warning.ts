/**
 * The sampled "gate is inert" warning (docs/routing.md §Gate-inert warning). Without
 * it, a fleet that never publishes load reads as healthy: the gate fails open
 * everywhere and cache_worker_queued sits at 0.
 */
import type { QueueGate } from '../queue-gate.js';
import type { PoolState } from '../types.js';

export const QUEUE_GATE_INERT_MESSAGE =
  '--worker-queue-limit is set but no worker has a fresh engine load sample, so the queue gate is inert. ' +
  'Check that engines advertise a load port and publish LoadStat';

/** The condition is steady-state and per request: one line in 64 exposes it without flooding the log. */
export const QUEUE_GATE_BLIND_LOG_SAMPLE = 64;

/**
 * The reference keeps one process-wide counter; routerctl keeps one per policy
 * instance, which is the same thing for a router with one cache-aware policy and
 * keeps tests independent.
 */
export class InertGateWarning {
  #blind = 0;

  /** Blind selections seen so far. */
  get blindSelections(): number {
    return this.#blind;
  }

  /**
   * Counts a blind selection and says whether the warning is due. The counter moves
   * only when the gate is configured, the pool is non-empty and no pool worker has
   * a fresh sample, as the reference's short-circuiting checks do; due on the
   * 1st, 65th, 129th … blind selection.
   */
  tick(gate: QueueGate, pool: PoolState): boolean {
    if (!gate.inert(pool)) return false;
    const before = this.#blind;
    this.#blind = before + 1;
    return before % QUEUE_GATE_BLIND_LOG_SAMPLE === 0;
  }
}
