import { blockHashes } from '../prefix/index.js';
import type { Clock, TimerHandle } from './clock.js';
import type { EngineParams } from './engine-params.js';
import { TTFT_BUCKETS_S } from './engine-params.js';
import { KvBlockCache } from './kv-block-cache.js';
import { nextOutputToken } from './output-text.js';
import { Rng } from './rng.js';
import { SimRequest } from './sim-request.js';
import type { RequestObserver, SubmitInput } from './sim-request.js';

/** Counters an engine rank exports; they only ever grow. */
export interface EngineCounters {
  requestsTotal: number;
  abortedTotal: number;
  promptTokensTotal: number;
  cachedTokensTotal: number;
  generationTokensTotal: number;
  /** Non-cumulative TTFT bucket counts (last slot is above the top bound). */
  ttftCounts: number[];
  ttftSumS: number;
}

/** A point-in-time load reading of one rank, in the engines' own terms. */
export interface EngineLoad {
  running: number;
  waiting: number;
  usedTokens: number;
  totalTokens: number;
  maxTotalTokens: number;
  waitingTokens: number;
  tokenUsage: number;
  cacheHitRate: number;
  genThroughput: number;
}

export type SubmitResult = { ok: true; request: SimRequest } | { ok: false; reason: 'queue_full' | 'too_long' };

/**
 * One DP rank of a simulated engine: an iteration-level discrete-event loop.
 *
 * Each step admits waiting requests in strict FIFO order while the running cap and
 * KV memory allow (a request that does not fit blocks those behind it, as in real
 * engines), schedules one decode token per decoding request plus prefill chunks up
 * to the token budget, and lasts β0 + β1·prefill + β2·decode (divided by speedup).
 * Prefix-cached blocks are not prefilled again, which is what cuts TTFT on a hit.
 * Steps chain on simulated time, so an engine whose timers fire late catches up.
 */
export class EngineCore {
  readonly rank: number;
  readonly params: Readonly<EngineParams>;
  readonly cache: KvBlockCache;
  readonly counters: EngineCounters;

  private readonly clock: Clock;
  private readonly rng: Rng;
  private waiting: SimRequest[] = [];
  private waitingHead = 0;
  private running: SimRequest[] = [];
  private stepTimer: TimerHandle | undefined;
  private wakeTimer: TimerHandle | undefined;
  private nextId = 1;
  private lastHit = 0;
  private lastInput = 0;
  private readonly throughputWindow: Array<{ at: number; total: number }> = [];

  constructor(params: Readonly<EngineParams>, clock: Clock, seed: number, rank = 0) {
    this.params = params;
    this.clock = clock;
    this.rank = rank;
    this.rng = new Rng(seed * 7919 + rank);
    this.cache = new KvBlockCache(params.kvBlocks);
    this.counters = {
      requestsTotal: 0,
      abortedTotal: 0,
      promptTokensTotal: 0,
      cachedTokensTotal: 0,
      generationTokensTotal: 0,
      ttftCounts: new Array<number>(TTFT_BUCKETS_S.length + 1).fill(0),
      ttftSumS: 0,
    };
  }

  get waitingCount(): number {
    return this.waiting.length - this.waitingHead;
  }

  get runningCount(): number {
    return this.running.length;
  }

  submit(input: SubmitInput, observer: RequestObserver): SubmitResult {
    const p = this.params;
    const maxTokens = Math.max(0, Math.floor(input.maxTokens));
    if (input.promptTokens.length + maxTokens > p.maxModelLen) return { ok: false, reason: 'too_long' };
    // A request that could never fit in KV memory would block the queue forever.
    if (Math.ceil((input.promptTokens.length + maxTokens) / p.blockSize) > p.kvBlocks) {
      return { ok: false, reason: 'too_long' };
    }
    if (this.waitingCount >= p.maxQueued) return { ok: false, reason: 'queue_full' };

    const now = this.clock.now();
    const outputLen = input.ignoreEos
      ? maxTokens
      : Math.max(1, Math.min(maxTokens, Math.round(this.rng.lognormal(p.outputMedianTokens, p.outputSigma))));
    const overhead = (p.alpha0Ms + p.alpha1Ms * input.promptTokens.length) / p.speedup;
    const req = new SimRequest(
      this.nextId++,
      input,
      blockHashes(input.promptTokens, p.blockSize),
      Math.min(outputLen, maxTokens),
      now,
      now + overhead,
      observer,
    );
    req.rank = this.rank;
    this.counters.requestsTotal++;
    this.waiting.push(req);
    this.kick();
    return { ok: true, request: req };
  }

  /** Remove a request wherever it is (client went away); frees its KV memory. */
  abort(req: SimRequest): void {
    if (req.state === 'finished' || req.state === 'aborted') return;
    if (req.state === 'waiting') {
      const i = this.waiting.indexOf(req, this.waitingHead);
      if (i >= 0) this.waiting.splice(i, 1);
    } else {
      const i = this.running.indexOf(req);
      if (i >= 0) this.running.splice(i, 1);
      this.cache.release(req.pinnedHashes, req.pinnedCount, req.anonymousBlocks);
    }
    req.state = 'aborted';
    req.finishReason = 'abort';
    req.finishedAt = this.clock.now();
    this.counters.abortedTotal++;
    req.observer.onFinish(req);
  }

  load(): EngineLoad {
    const bs = this.params.blockSize;
    const used = this.cache.usedBlocks() * bs;
    let waitingTokens = 0;
    for (let i = this.waitingHead; i < this.waiting.length; i++) waitingTokens += this.waiting[i]!.promptTokens;
    const capacity = this.params.kvBlocks * bs;
    return {
      running: this.running.length,
      waiting: this.waitingCount,
      usedTokens: used,
      totalTokens: used + waitingTokens,
      maxTotalTokens: capacity,
      waitingTokens,
      tokenUsage: capacity > 0 ? used / capacity : 0,
      cacheHitRate: this.lastHit + this.lastInput > 0 ? this.lastHit / (this.lastHit + this.lastInput) : 0,
      genThroughput: this.throughput(),
    };
  }

  /** Drop unreferenced cached blocks; refused (false) while requests are in the engine. */
  flushCache(): boolean {
    if (this.running.length > 0 || this.waitingCount > 0) return false;
    this.cache.flush();
    return true;
  }

  /** Stop timers; requests still inside are aborted. */
  close(): void {
    if (this.stepTimer) this.clock.cancel(this.stepTimer);
    if (this.wakeTimer) this.clock.cancel(this.wakeTimer);
    this.stepTimer = this.wakeTimer = undefined;
    for (const r of [...this.running, ...this.waiting.slice(this.waitingHead)]) this.abort(r);
  }

  private kick(): void {
    if (this.stepTimer || this.wakeTimer) return;
    this.startStep(this.clock.now());
  }

  private startStep(t: number): void {
    this.admit(t);
    const p = this.params;
    let decode = 0;
    for (const r of this.running) {
      r.decodingThisStep = r.prefillRemaining === 0;
      r.stepChunk = 0;
      if (r.decodingThisStep) decode++;
    }
    let budget = p.maxBatchedTokens - decode;
    let prefill = 0;
    for (const r of this.running) {
      if (r.prefillRemaining > 0 && budget > 0) {
        r.stepChunk = Math.min(r.prefillRemaining, budget);
        budget -= r.stepChunk;
        prefill += r.stepChunk;
      }
    }
    if (decode === 0 && prefill === 0) {
      this.sleepUntilHeadReady(t);
      return;
    }
    const duration = (p.beta0Ms + p.beta1Ms * prefill + p.beta2Ms * decode) / p.speedup;
    const end = t + duration;
    this.stepTimer = this.clock.schedule(end, () => this.endStep(end));
  }

  private sleepUntilHeadReady(t: number): void {
    const head = this.waiting[this.waitingHead];
    if (!head || head.readyAt <= t) return; // idle, or blocked on memory with nothing running (cannot happen: see submit)
    this.wakeTimer = this.clock.schedule(head.readyAt, () => {
      this.wakeTimer = undefined;
      if (!this.stepTimer) this.startStep(head.readyAt);
    });
  }

  private admit(t: number): void {
    const p = this.params;
    let hit = 0;
    let input = 0;
    while (this.running.length < p.maxRunning && this.waitingHead < this.waiting.length) {
      const r = this.waiting[this.waitingHead]!;
      if (r.readyAt > t) break;
      // The last prompt token is always computed, so a full hit still prefills one block.
      const maxHits = Math.floor((r.promptTokens - 1) / p.blockSize);
      const hits = this.cache.matchPrefix(r.promptHashes, Math.max(0, Math.min(maxHits, r.promptHashes.length)));
      const reserve = Math.ceil((r.promptTokens + r.outputLen) / p.blockSize) - hits;
      if (!this.cache.admit(r.promptHashes, hits, reserve)) break;
      this.waitingHead++;
      r.state = 'running';
      r.admittedAt = t;
      r.pinnedHashes = r.promptHashes;
      r.pinnedCount = hits;
      r.anonymousBlocks = reserve;
      r.promptBlocksCommitted = hits;
      r.cachedTokens = hits * p.blockSize;
      r.prefillRemaining = r.promptTokens - r.cachedTokens;
      this.counters.promptTokensTotal += r.promptTokens;
      this.counters.cachedTokensTotal += r.cachedTokens;
      hit += r.cachedTokens;
      input += r.prefillRemaining;
      this.running.push(r);
    }
    if (hit + input > 0) {
      this.lastHit = hit;
      this.lastInput = input;
    }
    this.compactWaiting();
  }

  private endStep(t: number): void {
    this.stepTimer = undefined;
    let finished = false;
    for (const r of this.running) {
      if (r.stepChunk > 0) {
        r.prefillRemaining -= r.stepChunk;
        r.stepChunk = 0;
        if (r.prefillRemaining === 0) {
          this.commitPromptBlocks(r);
          this.emit(r, t);
        }
      } else if (r.decodingThisStep) {
        this.emit(r, t);
      }
      if (r.prefillRemaining === 0 && r.output.length >= r.outputLen) finished = true;
    }
    if (finished) {
      const still: SimRequest[] = [];
      for (const r of this.running) {
        if (r.state === 'running' && r.prefillRemaining === 0 && r.output.length >= r.outputLen) this.finish(r, t);
        else if (r.state === 'running') still.push(r);
      }
      this.running = still;
    }
    if (this.running.length > 0 || this.waitingCount > 0) this.startStep(t);
  }

  private emit(r: SimRequest, t: number): void {
    if (r.outputLen === 0) return;
    const tok = nextOutputToken(this.rng);
    r.output.push(tok.id);
    this.counters.generationTokensTotal++;
    if (r.output.length === 1) {
      r.firstTokenAt = t;
      this.observeTtft((t - r.arrivalAt) / 1000);
    }
    r.observer.onToken(tok.piece, r.output.length - 1, t);
  }

  private commitPromptBlocks(r: SimRequest): void {
    const full = r.promptHashes.length;
    if (full > r.promptBlocksCommitted) {
      this.cache.commit(r.promptHashes, r.promptBlocksCommitted, full);
      r.anonymousBlocks -= full - r.promptBlocksCommitted;
      r.pinnedCount = full;
      r.promptBlocksCommitted = full;
    }
  }

  private finish(r: SimRequest, t: number): void {
    // Generated blocks become cacheable too: the next turn of a conversation hits them.
    const all = blockHashes(r.prompt.concat(r.output), this.params.blockSize);
    if (all.length > r.pinnedCount) {
      this.cache.commit(all, r.pinnedCount, all.length);
      r.anonymousBlocks -= all.length - r.pinnedCount;
    }
    this.cache.release(all, all.length, r.anonymousBlocks);
    r.pinnedHashes = all;
    r.pinnedCount = 0;
    r.anonymousBlocks = 0;
    r.state = 'finished';
    r.finishReason = r.output.length >= r.maxTokens ? 'length' : 'stop';
    r.finishedAt = t;
    this.recordThroughput(t);
    r.observer.onFinish(r);
  }

  private observeTtft(seconds: number): void {
    const c = this.counters;
    let i = 0;
    while (i < TTFT_BUCKETS_S.length && seconds > TTFT_BUCKETS_S[i]!) i++;
    c.ttftCounts[i]!++;
    c.ttftSumS += seconds;
  }

  private recordThroughput(t: number): void {
    const w = this.throughputWindow;
    const last = w[w.length - 1];
    if (!last || t - last.at >= 250) {
      w.push({ at: t, total: this.counters.generationTokensTotal });
      while (w.length > 2 && t - w[0]!.at > 5000) w.shift();
    }
  }

  private throughput(): number {
    const w = this.throughputWindow;
    if (w.length < 2) return 0;
    const a = w[0]!;
    const b = w[w.length - 1]!;
    const seconds = (b.at - a.at) / 1000;
    return seconds > 0 ? (b.total - a.total) / seconds : 0;
  }

  private compactWaiting(): void {
    if (this.waitingHead > 1024 && this.waitingHead * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.waitingHead);
      this.waitingHead = 0;
    }
  }
}
