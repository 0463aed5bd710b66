import type { PrefillEstimator } from './prefill-estimator.js';

/**
 * One request's prefill on one engine, from the send to its first byte: counted in the
 * engine's pending prefill tokens until it begins, and a sample for the engine's
 * estimator when it was sent to an engine with nothing waiting (docs/routing.md
 * §Learned prefill rate). The relay takes one per attempt; the virtual runs one per
 * request, so the what-if learns as the router does.
 */
export class PrefillTicket {
  /** Prefill tokens sent to the engine before this one that had not begun. */
  readonly ahead: number;
  /** The TTFT the learnt line predicted at the send, lateness left out (what lateness is measured against); null while cold. */
  readonly predicted: number | null;
  #pending = true;

  constructor(
    readonly estimator: PrefillEstimator,
    /** This request's own uncached prompt tokens, as the router predicts them. */
    readonly own: number,
    /** The engine's fresh load sample said nothing was waiting: the TTFT is prefill, not a wait for a slot. */
    readonly quiet: boolean,
    /** The prompt tokens the engine's fresh sample said were waiting, where it said. */
    engineQueued?: number,
  ) {
    this.ahead = estimator.pending;
    this.predicted = estimator.predictMs(own, engineQueued);
    estimator.pending += own;
  }

  /** Its prefill is over (the first byte came) or never will be (it ended): no longer ahead of anyone. Once. */
  begun(): void {
    if (!this.#pending) return;
    this.#pending = false;
    this.estimator.pending -= this.own;
  }

  /**
   * The first byte came `ttftMs` after the send. `engineOwn` is the engine's own count of
   * the request's uncached tokens where its usage said it; the tokens ahead are the
   * router's count, in the engine's tokens through the estimator's scale.
   */
  firstByte(ttftMs: number, engineOwn?: number): void {
    this.begun();
    const e = this.estimator;
    if (this.quiet) e.observe(engineOwn ?? this.own * e.scale, ttftMs, this.ahead * e.scale);
  }

  /**
   * The first byte is here, `ttftMs` after the send, at `atMs` on the router's clock: the
   * prefill has begun, and every first byte, quiet or not, says at once how late the
   * engine runs beside the line (the rate's sample waits for the usage at the end).
   */
  arrived(ttftMs: number, atMs: number): void {
    if (this.#pending && this.predicted !== null) this.estimator.observeLate(ttftMs - this.predicted, atMs);
    this.begun();
  }
}
