export type BreakerState = 'closed' | 'open' | 'half_open';

/**
 * A passive per-worker circuit breaker (the reference router's semantics): it opens
 * after `threshold` consecutive failures; after the cool-down one half-open probe is
 * let through, whose success closes it and whose failure reopens it. Backpressure
 * (429, 503) neither opens it nor resets a failure streak, but closes a half-open
 * breaker, since the worker evidently answers. Disabled when threshold is null (or
 * not positive).
 *
 * The caller reports one verdict per request, once the request is over: success when
 * the response completed, failure when the worker could not be reached, timed out,
 * answered 5xx, or cut the response midway (docs/retries-and-breaker.md). A request
 * can outlive an opening (a long stream), so verdicts may carry the `generation` read
 * at admission; one from a request admitted before the latest opening is stale and
 * ignored, so only the half-open probe decides whether an open breaker closes.
 */
export class CircuitBreaker {
  private readonly threshold: number | null;
  private readonly coolDownMs: number;
  private failures = 0;
  private openedAt = 0;
  private probeInFlight = false;
  private gen = 0;
  state: BreakerState = 'closed';
  /** Bumped whenever `state` changes, so the registry can react. */
  onChange: ((state: BreakerState) => void) | undefined;

  constructor(threshold: number | null, coolDownMs: number) {
    this.threshold = threshold !== null && threshold > 0 ? threshold : null;
    this.coolDownMs = coolDownMs;
  }

  /** Whether the breaker is enabled at all. */
  get enabled(): boolean {
    return this.threshold !== null;
  }

  /** Consecutive failures counted towards opening. */
  get failureStreak(): number {
    return this.failures;
  }

  /** Bumped at every opening; read it right after a successful acquire and hand it back with the verdict. */
  get generation(): number {
    return this.gen;
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

  success(generation?: number): void {
    if (this.stale(generation) || this.state === 'open') return;
    this.failures = 0;
    this.probeInFlight = false;
    if (this.state !== 'closed') this.set('closed');
  }

  backpressure(generation?: number): void {
    if (this.stale(generation) || this.state === 'open') return;
    this.probeInFlight = false;
    if (this.state === 'half_open') this.set('closed');
  }

  failure(now: number, generation?: number): void {
    if (this.threshold === null || this.stale(generation)) return;
    if (this.state === 'open') return; // failures while open are ignored; cool-down runs from the first opening
    this.probeInFlight = false;
    if (this.state === 'half_open' || ++this.failures >= this.threshold) this.open(now);
  }

  /** Give back a claimed probe that was never used (the request was cancelled first, or the router failed it). */
  release(generation?: number): void {
    if (this.stale(generation)) return;
    this.probeInFlight = false;
  }

  private stale(generation: number | undefined): boolean {
    return generation !== undefined && generation !== this.gen;
  }

  private open(now: number): void {
    this.failures = 0;
    this.openedAt = now;
    this.gen++;
    this.set('open');
  }

  private set(state: BreakerState): void {
    this.state = state;
    this.onChange?.(state);
  }
}
