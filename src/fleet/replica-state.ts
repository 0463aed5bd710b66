import type { ReplicaStatus } from './view-model.js';

/**
 * What a router replica is to an operator, in one word (docs/metrics-and-admin.md
 * §Replica states):
 * - `up`: it answered the last read and takes requests;
 * - `draining`: it answers, but has begun its shutdown (the admin state's
 *   `router.ready` is false, or its /readyz says `draining`): a load balancer has
 *   stopped sending to it, and its figures still count, since its in-flight requests
 *   are still being served;
 * - `down`: the last read got no answer (or none has come since `top` started); it is
 *   left out of every fleet figure.
 */
export type ReplicaState = 'up' | 'draining' | 'down';

export function replicaState(r: ReplicaStatus): ReplicaState {
  if (!r.live || r.snapshot === null) return 'down';
  return r.snapshot.router.ready === false ? 'draining' : 'up';
}

/** Milliseconds since the replica last answered, on the local clock; null when it never has. */
export function lastAnswerAgeMs(r: ReplicaStatus, now: number): number | null {
  return r.receivedAt === null ? null : Math.max(0, Math.round(now - r.receivedAt));
}
