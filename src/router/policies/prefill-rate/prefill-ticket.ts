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
  #pending = true;

  constructor(
    readonly estimator: PrefillEstimator,
    /** This request's own uncached prompt tokens, as the router predicts them. */
    readonly own: number,
    /** The engine's fresh load sample said nothing was waiting: the TTFT is prefill, not a wait for a slot. */
    readonly quiet: boolean,
  ) {
    this.ahead = estimator.pending;
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
}
