import type { AdminState } from './admin-state.js';
import type { AdminWorker } from './worker-fields.js';

/**
 * One `event: state_delta` of `/admin/stream?delta=1` (docs/metrics-and-admin.md
 * §Stream deltas): what changed in the state document since the stream's previous
 * event. Applied in order to the stream's first event (a whole `state`), it gives the
 * document the router would have sent whole, but that each `sample_age_ms` is
 * `sample_clock_ms − sample_at_ms` (the same age, to the millisecond).
 */
export interface AdminStateDelta {
  /** The document's top-level fields that changed, whole; `timestamp_ms` is always here. */
  set: Partial<Omit<AdminState, 'workers'>>;
  /**
   * Workers added (whole entries) or changed (`url` and the fields that changed, each
   * whole, but `latency`: a changed one is `latency_added`, what each histogram
   * gained: [bucket index, observations] pairs, the +Inf bucket's index after the last
   * bound's, and the new sum; a histogram that gained nothing is left out).
   */
  workers: Array<
    Partial<AdminWorker> & {
      url: string;
      latency_added?: Partial<Record<keyof AdminWorker['latency'], { added: Array<[index: number, observations: number]>; sum: number }>>;
    }
  >;
  /** URLs of the workers that left the document. */
  removed: string[];
  /** The workers' order by URL; present only when it is not the previous order without the removed and with the added at the end. */
  order?: string[];
  /** Every worker's `sample_at_ms`, in document order, when a quarter of the fleet or more took a new sample; then no entry of `workers` carries it. */
  sample_at_ms?: Array<number | null>;
  /** Epoch ms now on the clock of `sample_at_ms`. */
  sample_clock_ms: number;
  /**
   * Workers this event had no room for (it holds some 192 KB at most): changed ones,
   * each in a later event with all it gained meanwhile, and workers of the document not
   * sent yet (a document past the budget), in the events that follow at once. Absent
   * when none waits.
   */
  deferred?: number;
}
