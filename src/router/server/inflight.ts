/**
 * Generation requests in flight at the router, and a wait for none: what a drain
 * watches (docs/http-edge.md §Shutdown and signals).
 */
export class InflightRequests {
  #count = 0;
  #idleWaiters: Array<() => void> = [];

  get count(): number {
    return this.#count;
  }

  enter(): void {
    this.#count++;
  }

  leave(): void {
    if (--this.#count === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves the next time the count reaches 0 (not at once when it is 0 now: callers check first). */
  idle(): Promise<void> {
    return new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }
}
