import { countTokens } from '../prefix/index.js';
import { Rng } from '../sim/rng.js';
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
  outputMedianTokens: number;
  outputMaxTokens: number;
  /** Every burstEverySeconds, the rate is multiplied by burstFactor for burstSeconds. */
  burstEverySeconds: number;
  burstSeconds: number;
  burstFactor: number;
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
  outputMedianTokens: 48,
  outputMaxTokens: 128,
  burstEverySeconds: 15,
  burstSeconds: 3,
  burstFactor: 3,
});

/** One request the workload asks for, before the conversation history is attached. */
export interface Arrival {
  /** Seconds from the start of the run. */
  at: number;
  seq: number;
  session: number;
  family: number;
  turn: number;
  userMessage: string;
  maxTokens: number;
}

const WORDS = (
  'cluster node queue cache prefix token latency request engine batch prefill decode schedule memory block evict ' +
  'policy router worker fleet load sample fresh gate limit floor divert affinity owner replica shard stream metric ' +
  'alert budget window burst session context history system prompt reply answer operator runbook incident'
).split(' ');

function sentence(rng: Rng, words: number): string {
  let s = '';
  for (let i = 0; i < words; i++) s += `${WORDS[rng.int(WORDS.length)]}${i === words - 1 ? '. ' : ' '}`;
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A family's system prompt: deterministic text of about `tokens` tokens. */
export function systemPrompt(seed: number, family: number, tokens: number): string {
  const rng = new Rng(seed * 1009 + family * 7919 + 1);
  let text = `You are assistant #${family} for the operations team of fleet ${family}. Follow the runbook below.\n`;
  while (countTokens(text) < tokens) text += sentence(rng, 8 + rng.int(10));
  return text;
}

export class Workload {
  readonly options: Readonly<WorkloadOptions>;
  readonly systemPrompts: string[];
  private readonly rng: Rng;
  private readonly zipf: Zipf;
  private t = 0;
  private seq = 0;
  private nextSession = 0;
  private readonly open: Array<{ id: number; family: number; turns: number; turn: number }> = [];

  constructor(options: Partial<WorkloadOptions> = {}) {
    this.options = { ...DEFAULT_WORKLOAD, ...options };
    const o = this.options;
    const sizes = new Rng(o.seed ^ 0xabcdef);
    this.systemPrompts = Array.from({ length: o.families }, (_, f) =>
      systemPrompt(o.seed, f, o.systemTokensMin + sizes.int(Math.max(1, o.systemTokensMax - o.systemTokensMin + 1))),
    );
    this.rng = new Rng(o.seed);
    this.zipf = new Zipf(o.families, o.zipfS);
  }

  /** Rate in effect at time t (seconds): bursts come at fixed intervals. */
  rateAt(t: number): number {
    const o = this.options;
    const inBurst = o.burstEverySeconds > 0 && t % o.burstEverySeconds >= o.burstEverySeconds - o.burstSeconds;
    return o.rate * (inBurst ? o.burstFactor : 1);
  }

  /** The next arrival. Inter-arrival gaps are exponential at the current rate (Poisson). */
  next(): Arrival {
    const o = this.options;
    const rate = this.rateAt(this.t);
    this.t += rate > 0 ? -Math.log(1 - this.rng.next()) / rate : Infinity;
    while (this.open.length < o.sessions) {
      this.open.push({ id: this.nextSession++, family: this.zipf.sample(this.rng), turns: 1 + this.rng.int(o.maxTurns), turn: 0 });
    }
    const i = this.rng.int(this.open.length);
    const s = this.open[i]!;
    const arrival: Arrival = {
      at: this.t,
      seq: this.seq++,
      session: s.id,
      family: s.family,
      turn: s.turn,
      userMessage: `${sentence(this.rng, 6 + this.rng.int(20))}(request ${this.seq})`,
      maxTokens: Math.max(1, Math.min(o.outputMaxTokens, Math.round(this.rng.lognormal(o.outputMedianTokens, 0.5)))),
    };
    if (++s.turn >= s.turns) this.open.splice(i, 1);
    return arrival;
  }
}
