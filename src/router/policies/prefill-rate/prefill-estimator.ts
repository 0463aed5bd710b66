import { theilSen } from './theil-sen.js';

/**
 * How many recent samples the fit reads: enough that the slope holds within a tenth when
 * most samples waited part of a decode step on top of their prefill (64 left it 15 % off
 * on the simulator's conversations: test/router/prefill-estimator.test.ts), few enough
 * that an engine that changed (a restart on other hardware) is learnt again within
 * minutes of traffic.
 */
export const PREFILL_WINDOW = 128;
/** No estimate from fewer samples than this: until then the router behaves as without one (cold start). */
export const PREFILL_MIN_SAMPLES = 12;
/**
 * No estimate until the samples span this ratio of prompt sizes: prompts all of one
 * length say how long such a prompt takes, not how the time grows with its length.
 */
export const PREFILL_MIN_SPREAD = 2;
/** Samples sent behind pending prefill before the weight of what is pending is learnt; until then it weighs what the engine's own tokens weigh. */
export const AHEAD_MIN_SAMPLES = 8;
/** The fit is made again after this many new samples, not on every one: a sampled response pays for a fit one time in eight. */
const REFIT_EVERY = 8;
/** Ratios kept of the engine's prompt tokens to the router's count of the same prompt. */
const SCALE_WINDOW = 15;
/**
 * How long a first byte's lateness counts, ms: long enough to hold several requests'
 * worth under any load that matters, short enough that an engine the router stopped
 * sending to (its lateness said every request would miss) is believed again within
 * seconds, and is then measured afresh.
 */
export const LATE_WINDOW_MS = 10_000;
/** Lateness samples kept; fewer than LATE_MIN_SAMPLES within the window count as none. */
const LATE_SAMPLES = 32;
const LATE_MIN_SAMPLES = 4;
/**
 * The quantile of recent lateness a prediction adds, where the question is whether an
 * engine will likely miss (the slo gate leaving an owner): a low one, so that a minority
 * of late first bytes does not move traffic off a prefix. Measured on the conversation
 * trace's cells (docs/routing.md §SLO gate): 0.25 and 0.5 alike near capacity, 0.25 the
 * better past it; 0.9 sent a quarter of the runs near capacity into collapse.
 */
export const LATE_QUANTILE = 0.25;
/** The quantile a point prediction adds, what a decision record shows and an operator sets beside the TTFT measured: the median. */
export const POINT_LATE_QUANTILE = 0.5;
/**
 * The quantile where the question is whether a request will meet the goal (admission):
 * the share of admitted requests that are to meet it, the 90 % of the bar.
 */
export const ADMISSION_LATE_QUANTILE = 0.9;

/** What was learnt of one engine's prefill: TTFT ≈ baseMs + own tokens / tokensPerSecond + aheadMsPerToken × tokens pending ahead. */
export interface PrefillEstimate {
  /** Prompt tokens the engine prefills per second: 1 / the slope of TTFT over a request's own uncached tokens. */
  readonly tokensPerSecond: number;
  /** TTFT at zero tokens: the engine's fixed cost per step and the router's own, in ms. */
  readonly baseMs: number;
  /**
   * What each token of prefill pending ahead of a request adds to its TTFT, ms: about
   * 1 / tokensPerSecond on an engine that batches prefills (SGLang, vLLM), 0 on one that
   * times each request alone (llm-d-inference-sim under its running cap); 0 until
   * the engine's own ms per token until AHEAD_MIN_SAMPLES requests were sent behind
   * pending prefill (the engines that matter batch prefills).
   */
  readonly aheadMsPerToken: number;
  /** Samples the fit read (at most PREFILL_WINDOW). */
  readonly samples: number;
}

/** The TTFT an estimate predicts for `own` uncached tokens behind `ahead` pending ones, both the engine's tokens, ms. */
export function predictTtftMs(e: PrefillEstimate, own: number, ahead = 0): number {
  return e.baseMs + (1000 * own) / e.tokensPerSecond + e.aheadMsPerToken * ahead;
}

/**
 * One engine's prefill rate, learnt online from the requests the router sends it
 * (docs/routing.md §Learned prefill rate). A sample is one streamed 2xx sent while the
 * engine reported nothing waiting: the request's own uncached prompt tokens, the prefill
 * tokens the router had sent the engine before it that had not begun, and its time to
 * first byte. The rate and base are the Theil–Sen line through the samples with nothing
 * ahead; the weight of what is ahead is the median, over the others, of what the line
 * leaves unexplained per token ahead. Also counts the router's prefill in flight to the
 * engine that has not begun (`pending`), and the engine's tokens per router token
 * (`scale`), so that a prediction is in the engine's tokens.
 */
export class PrefillEstimator {
  /** Uncached prompt tokens (the router's count) this router sent the engine whose first byte has not come. */
  pending = 0;
  /**
   * The engine's tokens per token of the router's count, the median of the last ratios its
   * usage gave (1 until one has): a router counting by bytes, or by a tokenizer that is not
   * quite the engine's, predicts in the engine's tokens through it.
   */
  scale = 1;
  private readonly own = new Float64Array(PREFILL_WINDOW);
  private readonly ahead = new Float64Array(PREFILL_WINDOW);
  private readonly ttft = new Float64Array(PREFILL_WINDOW);
  private n = 0;
  private next = 0;
  private sinceFit = 0;
  /** Samples sent behind pending prefill since the last reset: the AHEAD_MIN_SAMPLES-th is fitted at once. */
  private aheadSeen = 0;
  private estimate: PrefillEstimate | null = null;
  private readonly lateMs = new Float64Array(LATE_SAMPLES);
  private readonly lateAt = new Float64Array(LATE_SAMPLES).fill(-Infinity);
  private nextLate = 0;
  /** The window's lateness, sorted (its first `lateCount`), as of `lateBuiltAt`, good until `lateValidUntil`; NaN: to be sorted again. */
  private readonly lateSorted = new Float64Array(LATE_SAMPLES);
  private lateCount = 0;
  private lateBuiltAt = NaN;
  private lateValidUntil = -Infinity;
  private readonly ratios = new Float64Array(SCALE_WINDOW);
  private ratioCount = 0;
  private nextRatio = 0;
  /** Shared by every estimator: a fit runs to its end before another starts. */
  private static readonly xs = new Float64Array(PREFILL_WINDOW);
  private static readonly ys = new Float64Array(PREFILL_WINDOW);
  private static readonly scratch = new Float64Array(PREFILL_WINDOW);
  private static readonly order = new Uint32Array(PREFILL_WINDOW);

  /** One sample: `own` uncached tokens behind `ahead` pending ones (the engine's tokens), first byte `ttftMs` after the send. */
  observe(own: number, ttftMs: number, ahead = 0): void {
    if (!(own > 0) || !(ttftMs >= 0) || !(ahead >= 0) || !Number.isFinite(own + ttftMs + ahead)) return;
    this.own[this.next] = own;
    this.ahead[this.next] = ahead;
    this.ttft[this.next] = ttftMs;
    this.next = (this.next + 1) % PREFILL_WINDOW;
    if (this.n < PREFILL_WINDOW) this.n++;
    // Fitted every REFIT_EVERY samples, and at once when an estimate first becomes possible or
    // the weight of what is ahead first becomes learnable: a prior must not outlive its evidence.
    if (ahead > 0 && ++this.aheadSeen === AHEAD_MIN_SAMPLES) this.sinceFit = REFIT_EVERY;
    if (++this.sinceFit >= REFIT_EVERY || (this.estimate === null && this.n >= PREFILL_MIN_SAMPLES)) this.fit();
  }

  /** The engine said `engineTokens` for a prompt the router counted `routerTokens`: one ratio more for `scale`. */
  observeScale(engineTokens: number, routerTokens: number): void {
    if (!(engineTokens > 0) || !(routerTokens > 0)) return;
    this.ratios[this.nextRatio] = engineTokens / routerTokens;
    this.nextRatio = (this.nextRatio + 1) % SCALE_WINDOW;
    if (this.ratioCount < SCALE_WINDOW) this.ratioCount++;
    const n = this.ratioCount;
    const s = PrefillEstimator.ys.subarray(0, n);
    s.set(this.ratios.subarray(0, n));
    s.sort();
    this.scale = n % 2 === 1 ? s[n >> 1]! : (s[(n >> 1) - 1]! + s[n >> 1]!) / 2;
  }

  /**
   * The TTFT predicted for a request of `routerTokens` uncached tokens (the router's count)
   * behind what is pending now, ms; null while cold. What is ahead is the larger of the
   * prefill this router sent that has not begun and `engineQueued`, the prompt tokens the
   * engine last reported waiting (the engine's tokens): its queue holds other routers'
   * requests too, while a request of this router's is in its queue and in `pending` at
   * once, so the two are not added. `nowMs` (the router's clock) adds the engine's recent
   * lateness; without it, none.
   */
  predictMs(routerTokens: number, engineQueued = 0, nowMs?: number, quantile = LATE_QUANTILE): number | null {
    const e = this.estimate;
    if (e === null) return null;
    const own = routerTokens * this.scale;
    const line = predictTtftMs(e, own, Math.max(this.pending * this.scale, engineQueued));
    // Lateness may lower a prediction the ahead term overstates, never below the quiet line.
    return Math.max(predictTtftMs(e, own, 0), line + this.lateness(nowMs, quantile));
  }

  /**
   * A first byte came `lateMs` after the TTFT predicted when its request was sent (negative:
   * before it), at `atMs`: what the line does not know of the engine under load (a wait for
   * a running slot, decode steps sharing the batch with prefill, other routers' requests).
   */
  observeLate(lateMs: number, atMs: number): void {
    if (!Number.isFinite(lateMs) || !Number.isFinite(atMs)) return;
    this.lateMs[this.nextLate] = lateMs;
    this.lateAt[this.nextLate] = atMs;
    this.nextLate = (this.nextLate + 1) % LATE_SAMPLES;
    this.lateBuiltAt = NaN;
  }

  /** A quantile (nearest rank) of the lateness of the first bytes of the last LATE_WINDOW_MS before `nowMs`, ms; 0 with too few of them (or no clock). */
  lateness(nowMs: number | undefined, quantile = LATE_QUANTILE): number {
    if (nowMs === undefined) return 0;
    // Every prediction reads this (a decision record, each owner's): the window is sorted
    // again only when a sample came, one left it, or the clock went back, not per read.
    if (!(nowMs >= this.lateBuiltAt && nowMs < this.lateValidUntil)) this.sortLateWindow(nowMs);
    const k = this.lateCount;
    if (k < LATE_MIN_SAMPLES) return 0;
    // Nearest rank: the smallest sample with at least `quantile` of them at or under it.
    return this.lateSorted[Math.max(0, Math.ceil(quantile * k) - 1)]!;
  }

  /** The samples of the window ending at `nowMs`, sorted, and until when they stay the window's. */
  private sortLateWindow(nowMs: number): void {
    let k = 0;
    let firstOut = Infinity;
    for (let i = 0; i < LATE_SAMPLES; i++) {
      const at = this.lateAt[i]!;
      if (at < nowMs - LATE_WINDOW_MS) continue;
      this.lateSorted[k++] = this.lateMs[i]!;
      if (at + LATE_WINDOW_MS < firstOut) firstOut = at + LATE_WINDOW_MS;
    }
    this.lateSorted.subarray(0, k).sort();
    this.lateCount = k;
    this.lateBuiltAt = nowMs;
    this.lateValidUntil = firstOut;
  }

  /** The TTFT predicted for `routerTokens` uncached tokens with nothing ahead, lateness included: the soonest this engine could give it now, ms; null while cold. */
  soonestMs(routerTokens: number, nowMs?: number, quantile = LATE_QUANTILE): number | null {
    const e = this.estimate;
    if (e === null) return null;
    const quiet = predictTtftMs(e, routerTokens * this.scale, 0);
    return Math.max(quiet, quiet + this.lateness(nowMs, quantile));
  }

  /** The estimate, or null while cold: too few samples, too little spread, or no rise of TTFT with tokens. */
  get current(): PrefillEstimate | null {
    return this.estimate;
  }

  /** Samples held (at most PREFILL_WINDOW). */
  get samples(): number {
    return this.n;
  }

  /** Forget everything: the engine behind the URL may be another one now (it left and came back). */
  reset(): void {
    this.n = 0;
    this.next = 0;
    this.sinceFit = 0;
    this.aheadSeen = 0;
    this.pending = 0;
    this.estimate = null;
    this.scale = 1;
    this.ratioCount = 0;
    this.nextRatio = 0;
    this.lateAt.fill(-Infinity);
    this.nextLate = 0;
    this.lateBuiltAt = NaN;
  }

  private fit(): void {
    this.sinceFit = 0;
    const { xs, ys, scratch, order } = PrefillEstimator;
    // The line, through the samples with nothing ahead.
    let m = 0;
    let lo = Infinity;
    let hi = 0;
    for (let i = 0; i < this.n; i++) {
      if (this.ahead[i]! > 0) continue;
      const x = this.own[i]!;
      xs[m] = x;
      ys[m++] = this.ttft[i]!;
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    if (m < PREFILL_MIN_SAMPLES || hi < PREFILL_MIN_SPREAD * lo) return;
    const line = theilSen(xs, ys, m, order, scratch);
    // A flat or falling line says nothing about the rate: keep the last estimate.
    if (line === null || !(line.slope > 0)) return;
    // What the line leaves unexplained of the others, per token ahead.
    let k = 0;
    for (let i = 0; i < this.n; i++) {
      const a = this.ahead[i]!;
      if (a > 0) scratch[k++] = (this.ttft[i]! - line.intercept - line.slope * this.own[i]!) / a;
    }
    // Until it is learnt, a pending token weighs what the engine's own take: SGLang and vLLM batch prefills, so what is ahead is computed first.
    let aheadMsPerToken = line.slope;
    if (k >= AHEAD_MIN_SAMPLES) {
      const s = scratch.subarray(0, k).sort();
      const median = k % 2 === 1 ? s[k >> 1]! : (s[(k >> 1) - 1]! + s[k >> 1]!) / 2;
      // Never below nothing, never above twice the engine's own rate: a pending token costs at most its own prefill, with room for noise.
      aheadMsPerToken = Math.min(Math.max(0, median), 2 * line.slope);
    }
    this.estimate = { tokensPerSecond: 1000 / line.slope, baseMs: Math.max(0, line.intercept), aheadMsPerToken, samples: this.n };
  }
}
