import type { Clock } from './clock.js';
import { EngineCore } from './engine-core.js';
import type { EngineLoad, SubmitResult } from './engine-core.js';
import type { EngineParams } from './engine-params.js';
import type { Flavor } from './http/responses.js';
import type { SimPushPublisher } from './push-publisher.js';
import { Rng } from './rng.js';
import type { KeyedSubmitInput, RequestObserver, SimRequest, SubmitInput } from './sim-request.js';
import { STAND_IN_TOKENIZER } from './sim-tokenizer.js';
import type { SimTokenizer } from './sim-tokenizer.js';

/** Runtime switches set through PUT /sim/config and PUT /sim/load. */
export interface SimControls {
  /** false: load endpoints answer 404 and load gauges vanish from /metrics. */
  loadReporting: boolean;
  /** Share of generation requests failed with a 5xx, 0..1. */
  failureRate: number;
  /** Reported waiting count (summed over ranks) overriding the real one; null = real. */
  pinnedWaiting: number | null;
  /** Load endpoints misbehave: answer unparseable bodies, or never answer. */
  loadFault: 'garbage' | 'hang' | null;
}

export interface SimEngineOptions {
  flavor: Flavor;
  model: string;
  dpSize: number;
  params: Readonly<EngineParams>;
  seed: number;
  clock: Clock;
  /**
   * The KV pool as given in tokens (SGLang's --max-total-tokens), when it was given
   * that way rather than in blocks; /server_info echoes it as SGLang echoes its flag.
   * params.kvBlocks must already be sized from it.
   */
  maxTotalTokens?: number;
  /**
   * Pose as a real SGLang engine (docs/simulator.md §Posing as SGLang): no `simulated`
   * marker in its JSON, SGLang's block hashes in its KV events. SGLang flavour only.
   */
  asSglang?: boolean;
  /** Tokenizes text and chat prompts; the stand-in when absent. Only with asSglang. */
  tokenizer?: SimTokenizer;
}

export type EngineSubmitResult = SubmitResult | { ok: false; reason: 'injected_failure' | 'bad_rank' };

/**
 * One simulated engine process: `dpSize` independent ranks (each with its own queue
 * and cache, as in SGLang data parallelism), requests spread round-robin unless the
 * body pins `data_parallel_rank`, plus the test controls.
 */
export class SimEngine {
  readonly flavor: Flavor;
  readonly model: string;
  readonly ranks: EngineCore[];
  readonly params: Readonly<EngineParams>;
  readonly controls: SimControls = { loadReporting: true, failureRate: 0, pinnedWaiting: null, loadFault: null };
  readonly startedAt = Date.now();
  readonly maxTotalTokensFlag: number | null;
  /** Posing as SGLang: nothing in its JSON says it is simulated, and its KV events carry SGLang's hashes. */
  readonly asSglang: boolean;
  /** How text and chat prompts become token ids. */
  readonly tokenizer: SimTokenizer;
  inflight = 0;
  failuresInjected = 0;
  /** The engine's push channels, when it publishes (advertised in /server_info). */
  push: SimPushPublisher | undefined;

  private readonly failureRng: Rng;
  private nextRank = 0;

  constructor(opts: SimEngineOptions) {
    this.flavor = opts.flavor;
    this.model = opts.model;
    this.params = opts.params;
    this.maxTotalTokensFlag = opts.maxTotalTokens ?? null;
    this.asSglang = opts.asSglang ?? false;
    if (this.asSglang && opts.flavor !== 'sglang') throw new Error(`asSglang poses as SGLang; it cannot be a ${opts.flavor} engine`);
    if (opts.tokenizer && !this.asSglang)
      throw new Error(
        'a tokenizer is only taken with asSglang: otherwise the engine says it is simulated, and routers key it with the stand-in tokenizer',
      );
    this.tokenizer = opts.tokenizer ?? STAND_IN_TOKENIZER;
    this.ranks = Array.from({ length: opts.dpSize }, (_, r) => new EngineCore(opts.params, opts.clock, opts.seed, r, opts.flavor));
    this.failureRng = new Rng(opts.seed ^ 0x5bd1e995);
  }

  submit(input: SubmitInput, observer: RequestObserver, dpRank?: number): EngineSubmitResult {
    return this.#submit(input, observer, dpRank);
  }

  /** submit, for a prompt keyed already (a replayed trace's, KeyedPrompt): no token array. */
  submitKeyed(input: KeyedSubmitInput, observer: RequestObserver, dpRank?: number): EngineSubmitResult {
    return this.#submit(input, observer, dpRank);
  }

  #submit(input: SubmitInput | KeyedSubmitInput, observer: RequestObserver, dpRank: number | undefined): EngineSubmitResult {
    if (this.controls.failureRate > 0 && this.failureRng.next() < this.controls.failureRate) {
      this.failuresInjected++;
      return { ok: false, reason: 'injected_failure' };
    }
    let rank: number;
    if (dpRank === undefined) {
      rank = this.nextRank;
      this.nextRank = (this.nextRank + 1) % this.ranks.length;
    } else if (Number.isInteger(dpRank) && dpRank >= 0 && dpRank < this.ranks.length) {
      rank = dpRank;
    } else {
      return { ok: false, reason: 'bad_rank' };
    }
    const result = this.ranks[rank]!.submit(input, {
      onToken: (piece, index, at) => observer.onToken(piece, index, at),
      onFinish: (req) => {
        this.inflight--;
        observer.onFinish(req);
      },
    });
    if (result.ok) this.inflight++;
    return result;
  }

  /** Leading whole blocks of `tokens` the engine's caches hold now: its deepest rank's (EngineCore.heldPrefixBlocks). */
  heldPrefixBlocks(tokens: ArrayLike<number>): number {
    let held = 0;
    for (const r of this.ranks) held = Math.max(held, r.heldPrefixBlocks(tokens));
    return held;
  }

  /** Load per rank as reported to the outside, with the pinned waiting count applied. */
  reportedLoads(): EngineLoad[] {
    const loads = this.ranks.map((r) => r.load());
    const pinned = this.controls.pinnedWaiting;
    if (pinned !== null) {
      // Spread the pinned total so that ranks still add up to it.
      const base = Math.floor(pinned / loads.length);
      const extra = pinned % loads.length;
      loads.forEach((l, i) => (l.waiting = base + (i < extra ? 1 : 0)));
    }
    return loads;
  }

  abort(request: SimRequest): void {
    this.ranks[request.rank]?.abort(request);
  }

  flushCache(): boolean {
    if (this.ranks.some((r) => r.busy)) return false;
    for (const r of this.ranks) r.flushCache();
    return true;
  }

  close(): void {
    this.push?.close();
    for (const r of this.ranks) r.close();
  }
}
