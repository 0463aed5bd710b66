import { Rng } from '../sim/index.js';
import { pastedDocument, sentence, systemPrompt } from './system-prompt.js';
import { Zipf } from './zipf.js';

/**
 * A realistic shared-prefix chat workload, deterministic from its seed: a few prompt
 * families (long system prompts, 1–4K tokens) with Zipf popularity, multi-turn
 * sessions whose prefix grows each turn, Poisson arrivals with periodic bursts, and
 * output lengths from a seeded lognormal. The same seed gives the same sequence of
 * arrivals, sessions, messages and max_tokens whatever the router does.
 */
export interface WorkloadOptions {
  seed: number;
  /** Mean arrivals per second outside bursts. */
  rate: number;
  families: number;
  zipfS: number;
  systemTokensMin: number;
  systemTokensMax: number;
  /** Turns per session, uniform in [1, maxTurns]. */
  maxTurns: number;
  /** Concurrent open sessions kept; a new session starts when one ends. */
  sessions: number;
  /**
   * Seconds over which the open sessions grow from one to `sessions`, in step with the
   * clock; 0 opens them all at once. All at once, every early request opens a
   * conversation (with its pasted document, if any) on a cold cache.
   */
  sessionRampSeconds: number;

  outputMedianTokens: number;
  /** Lognormal shape of max_tokens around the median. */
  outputSigma: number;
  outputMaxTokens: number;
  /** Every burstEverySeconds, the rate is multiplied by burstFactor for burstSeconds. */
  burstEverySeconds: number;
  burstSeconds: number;
  burstFactor: number;
  /**
   * Share of sessions whose first turn pastes a document (a log, a file, retrieved
   * passages) ahead of the question: new text no engine has cached, so real prefill
   * work. 0 (the default) pastes none.
   */
  openingAttachmentShare: number;
  /** Share of later turns that paste a document too. 0 (the default) pastes none. */
  attachmentShare: number;
  /**
   * Token length of a pasted document: lognormal around the median with this shape,
   * at most attachmentMaxTokens, so most are a page or two and a few a whole log file.
   */
  attachmentMedianTokens: number;
  attachmentSigma: number;
  attachmentMaxTokens: number;
}

export const DEFAULT_WORKLOAD: Readonly<WorkloadOptions> = Object.freeze({
  seed: 7,
  rate: 10,
  families: 4,
  zipfS: 1.1,
  systemTokensMin: 1000,
  systemTokensMax: 4000,
  maxTurns: 4,
  sessions: 32,
  sessionRampSeconds: 0,
  outputMedianTokens: 48,
  outputSigma: 0.5,
  outputMaxTokens: 128,
  burstEverySeconds: 15,
  burstSeconds: 3,
  burstFactor: 3,
  openingAttachmentShare: 0,
  attachmentShare: 0,
  attachmentMedianTokens: 2000,
  attachmentSigma: 1,
  attachmentMaxTokens: 32000,
});

/** One request the workload asks for, before the conversation history is attached. */
export interface Arrival {
  /** Seconds from the start of the run. */
  at: number;
  seq: number;
  session: number;
  family: number;
  turn: number;
  /** The session's final turn: its history can be dropped once this one is answered. */
  last: boolean;
  userMessage: string;
  maxTokens: number;
}

interface OpenSession {
  id: number;
  family: number;
  turns: number;
  turn: number;
}

export class Workload {
  readonly options: Readonly<WorkloadOptions>;
  readonly systemPrompts: string[];
  /** Token count of each family's system prompt, as drawn from [systemTokensMin, systemTokensMax]. */
  readonly systemTokens: number[];
  private readonly rng: Rng;
  /** Draws attachments apart from `rng`, so pasting them changes no arrival, session or max_tokens. */
  private readonly docs: Rng;
  private readonly zipf: Zipf;
  private readonly peakRate: number;
  private t = 0;
  private seq = 0;
  private nextSession = 0;
  private readonly open: OpenSession[] = [];

  constructor(options: Partial<WorkloadOptions> = {}) {
    this.options = { ...DEFAULT_WORKLOAD, ...options };
    const o = this.options;
    const sizes = new Rng(o.seed ^ 0xabcdef);
    const span = Math.max(1, o.systemTokensMax - o.systemTokensMin + 1);
    this.systemTokens = Array.from({ length: o.families }, () => o.systemTokensMin + sizes.int(span));
    this.systemPrompts = this.systemTokens.map((tokens, f) => systemPrompt(o.seed, f, tokens));
    this.rng = new Rng(o.seed);
    this.docs = new Rng(o.seed ^ 0x5eed0d0c);
    this.zipf = new Zipf(o.families, o.zipfS);
    this.peakRate = o.rate * (this.hasBursts() ? Math.max(1, o.burstFactor) : 1);
  }

  /** Rate in effect at time t (seconds): bursts come at fixed intervals, at the end of each period. */
  rateAt(t: number): number {
    const o = this.options;
    const inBurst = this.hasBursts() && t % o.burstEverySeconds >= o.burstEverySeconds - o.burstSeconds;
    return o.rate * (inBurst ? o.burstFactor : 1);
  }

  /** Long-run mean arrival rate, bursts included. */
  meanRate(): number {
    return meanArrivalRate(this.options);
  }

  /**
   * The next arrival. Times follow a Poisson process whose rate steps up in bursts,
   * drawn by thinning (candidates at the peak rate, kept with probability
   * rate(t)/peak) so a gap that straddles a burst edge is not drawn at the wrong rate.
   */
  next(): Arrival {
    const o = this.options;
    if (this.peakRate <= 0) this.t = Infinity;
    else {
      do this.t += -Math.log(1 - this.rng.next()) / this.peakRate;
      while (this.rng.next() * this.peakRate > this.rateAt(this.t));
    }
    const cap =
      o.sessionRampSeconds > 0 ? Math.min(o.sessions, Math.max(1, Math.ceil((o.sessions * this.t) / o.sessionRampSeconds))) : o.sessions;
    while (this.open.length < cap) {
      this.open.push({ id: this.nextSession++, family: this.zipf.sample(this.rng), turns: 1 + this.rng.int(o.maxTurns), turn: 0 });
    }
    const i = this.rng.int(this.open.length);
    const s = this.open[i]!;
    const seq = this.seq++;
    const last = s.turn + 1 >= s.turns;
    const arrival: Arrival = {
      at: this.t,
      seq,
      session: s.id,
      family: s.family,
      turn: s.turn,
      last,
      userMessage: `${this.attachment(s.turn === 0 ? o.openingAttachmentShare : o.attachmentShare)}${sentence(this.rng, 6 + this.rng.int(20))}(request ${seq + 1})`,
      maxTokens: Math.max(1, Math.min(o.outputMaxTokens, Math.round(this.rng.lognormal(o.outputMedianTokens, o.outputSigma)))),
    };
    s.turn++;
    if (last) this.open.splice(i, 1);
    return arrival;
  }

  /** A pasted document for the next user turn, or '' (drawing nothing when attachments are off). */
  private attachment(share: number): string {
    const o = this.options;
    if (!(share > 0) || this.docs.next() >= share) return '';
    const tokens = Math.round(this.docs.lognormal(o.attachmentMedianTokens, o.attachmentSigma));
    return pastedDocument(this.docs, Math.max(1, Math.min(o.attachmentMaxTokens, tokens)));
  }

  private hasBursts(): boolean {
    return hasBursts(this.options);
  }
}

type BurstOptions = Pick<WorkloadOptions, 'rate' | 'burstEverySeconds' | 'burstSeconds' | 'burstFactor'>;

function hasBursts(o: BurstOptions): boolean {
  return o.burstEverySeconds > 0 && o.burstSeconds > 0 && o.burstFactor !== 1;
}

/** Long-run mean arrival rate of these options, bursts included. */
export function meanArrivalRate(o: BurstOptions): number {
  if (!hasBursts(o)) return o.rate;
  const share = Math.min(o.burstSeconds, o.burstEverySeconds) / o.burstEverySeconds;
  return o.rate * (1 + (o.burstFactor - 1) * share);
}
