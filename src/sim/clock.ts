/**
 * Time for the simulated engines, in milliseconds. The engine never reads the wall
 * clock directly, so tests drive it with a ManualClock and assert on simulated time
 * without sleeping, and the fleet drives it with the RealClock.
 */
export interface Clock {
  now(): number;
  /** Run fn once simulated time reaches `at` (immediately if it already has). */
  schedule(at: number, fn: () => void): TimerHandle;
  cancel(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly at: number;
}

/** Wall time. Timers already due run on setImmediate so a lagging engine catches up. */
export class RealClock implements Clock {
  now(): number {
    return performance.now();
  }

  schedule(at: number, fn: () => void): TimerHandle {
    const delay = at - performance.now();
    const handle: RealTimer = { at, timer: undefined, immediate: undefined };
    if (delay < 1) handle.immediate = setImmediate(fn);
    else handle.timer = setTimeout(fn, delay);
    return handle;
  }

  cancel(handle: TimerHandle): void {
    const h = handle as RealTimer;
    if (h.timer) clearTimeout(h.timer);
    if (h.immediate) clearImmediate(h.immediate);
  }
}

interface RealTimer extends TimerHandle {
  timer: NodeJS.Timeout | undefined;
  immediate: NodeJS.Immediate | undefined;
}

/** Simulated time that moves only when a test says so. Timers fire in time order. */
export class ManualClock implements Clock {
  private current: number;
  private readonly heap: ManualTimer[] = [];
  private seq = 0;

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  schedule(at: number, fn: () => void): TimerHandle {
    const t: ManualTimer = { at: Math.max(at, this.current), seq: this.seq++, fn, cancelled: false };
    this.push(t);
    return t;
  }

  cancel(handle: TimerHandle): void {
    (handle as ManualTimer).cancelled = true;
  }

  /** Advance by `ms`, firing every timer due on the way at its own time. */
  advance(ms: number): void {
    this.runUntil(this.current + ms);
  }

  /** Fire timers until none is left (bounded, so a runaway loop fails loudly). */
  runUntilIdle(maxTimers = 10_000_000): void {
    let fired = 0;
    while (this.heap.length > 0) {
      const t = this.pop()!;
      if (t.cancelled) continue;
      this.current = Math.max(this.current, t.at);
      t.fn();
      if (++fired > maxTimers) throw new Error('ManualClock.runUntilIdle: timer limit exceeded');
    }
  }

  private runUntil(target: number): void {
    while (this.heap.length > 0 && this.heap[0]!.at <= target) {
      const t = this.pop()!;
      if (t.cancelled) continue;
      this.current = t.at;
      t.fn();
    }
    this.current = Math.max(this.current, target);
  }

  // Sifts move a hole rather than swapping pairs: no temporary arrays, half the writes,
  // and the same heap, timer for timer, as swapping gives.
  private push(t: ManualTimer): void {
    const h = this.heap;
    let i = h.length;
    h.push(t);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = h[p]!;
      if (!before(t, parent)) break;
      h[i] = parent;
      i = p;
    }
    h[i] = t;
  }

  private pop(): ManualTimer | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    const n = h.length;
    if (n > 0 && last) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        let m = l;
        let child = h[l]!;
        if (r < n && before(h[r]!, child)) {
          m = r;
          child = h[r]!;
        }
        if (!before(child, last)) break;
        h[i] = child;
        i = m;
      }
      h[i] = last;
    }
    return top;
  }
}

interface ManualTimer extends TimerHandle {
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

function before(a: ManualTimer, b: ManualTimer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
