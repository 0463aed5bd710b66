/** How often deadlines are checked: a timeout fires up to this much late. */
export const SWEEP_MS = 250;

/** Something with a deadline, checked on each sweep. */
export interface Expiring {
  /** Called on each sweep with performance.now(). */
  expire(now: number): void;
}

/**
 * One timer for every connection's deadline (connect, answer, idle), checked four times a
 * second, in place of a timer per connection re-armed per request: a socket's own
 * `setTimeout` allocates a fresh timer each time it is set, and the idle one lived until
 * the connection's next request. At 4,096 workers that is some 0.3 s, long enough to be
 * promoted, so every young collection paid for the fleet (docs/dependencies.md §Idle connections and the young generation).
 * undici keeps its timers the same way, at a coarser tick.
 */
class DeadlineSweep {
  readonly #members = new Set<Expiring>();
  #timer: NodeJS.Timeout | undefined;

  add(e: Expiring): void {
    this.#members.add(e);
    this.#timer ??= setInterval(() => this.#sweep(), SWEEP_MS).unref();
  }

  delete(e: Expiring): void {
    this.#members.delete(e);
    if (this.#members.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #sweep(): void {
    const now = performance.now();
    for (const e of this.#members) e.expire(now);
  }
}

/** The process's one sweep. */
export const deadlines = new DeadlineSweep();
