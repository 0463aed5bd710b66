export type BreakerState = 'closed' | 'open' | 'half_open';

/**
 * A passive per-worker circuit breaker (the reference router's semantics): it opens
 * after `threshold` consecutive failures; after the cool-down one half-open probe is
 * let through, whose success closes it and whose failure reopens it. Backpressure
 * (429, 503) neither opens it nor resets a failure streak, but closes a half-open
 * breaker, since the worker evidently answers. Disabled when threshold is null.
 */
export class CircuitBreaker {
  private readonly threshold: number | null;
  private readonly coolDownMs: number;
  private failures = 0;
  private openedAt = 0;
  private probeInFlight = false;
  state: BreakerState = 'closed';
  /** Bumped whenever `state` changes, so the registry can react. */
  onChange: ((state: BreakerState) => void) | undefined;

  constructor(threshold: number | null, coolDownMs: number) {
    this.threshold = threshold;
    this.coolDownMs = coolDownMs;
  }

  /** Non-mutating: may a request be sent now (candidate filtering)? */
  wouldAllow(now: number): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') return now - this.openedAt >= this.coolDownMs;
    return !this.probeInFlight;
  }

  /** Claim the right to send; moves an expired open breaker to half-open and takes the probe slot. */
  acquire(now: number): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') {
      if (now - this.openedAt < this.coolDownMs) return false;
      this.set('half_open');
    }
    if (this.probeInFlight) return false;
    this.probeInFlight = true;
    return true;
  }

  success(): void {
    this.failures = 0;
    this.probeInFlight = false;
    if (this.state !== 'closed') this.set('closed');
  }

  backpressure(): void {
    this.probeInFlight = false;
    if (this.state === 'half_open') this.set('closed');
  }

  failure(now: number): void {
    if (this.threshold === null) return;
    if (this.state === 'open') return; // failures while open are ignored; cool-down runs from the first opening
    this.probeInFlight = false;
    if (this.state === 'half_open') {
      this.openedAt = now;
      this.set('open');
      return;
    }
    if (++this.failures >= this.threshold) {
      this.openedAt = now;
      this.set('open');
    }
  }

  /** Give back a claimed probe that was never used (the request was cancelled first). */
  release(): void {
    this.probeInFlight = false;
  }

  private set(state: BreakerState): void {
    this.state = state;
    this.onChange?.(state);
  }
}
