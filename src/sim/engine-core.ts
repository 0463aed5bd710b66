import { blockHashes } from '../prefix/index.js';
import type { Clock, TimerHandle } from './clock.js';
import type { EngineParams } from './engine-params.js';
import { invalidEngineParams } from './engine-params.js';
import { newEngineCounters } from './engine-metrics.js';
import type { EngineCounters } from './engine-metrics.js';
import type { Flavor } from './http/responses.js';
import { KvBlockCache } from './kv-block-cache.js';
import { checkLength } from './length-check.js';
import type { LengthRefusalReason } from './length-check.js';
import { nextOutputWord, outputWordId, outputWordPiece } from './output-text.js';
import { Rng } from './rng.js';
import { tokenPrompt } from './keyed-prompt.js';
import { SimRequest } from './sim-request.js';
import type { KeyedSubmitInput, RequestObserver, SubmitInput } from './sim-request.js';

export type { EngineCounters } from './engine-metrics.js';

/** A point-in-time load reading of one rank, in the engines' own terms. */
export interface EngineLoad {
  running: number;
  waiting: number;
  /** KV tokens allocated to requests (not merely promised to them). */
  usedTokens: number;
  /** usedTokens plus the raw prompt lengths of waiting requests. */
  totalTokens: number;
  maxTotalTokens: number;
  /** Raw prompt lengths of waiting requests. */
  waitingTokens: number;
  /** SGLang's num_waiting_uncached_tokens for the configured schedule policy. */
  waitingUncachedTokens: number;
  tokenUsage: number;
  cacheHitRate: number;
  genThroughput: number;
}

/**
 * A refusal for length carries the engine's reason and its own words (checkLength);
 * a full queue is the 429.
 */
export type SubmitResult =
  { ok: true; request: SimRequest } | { ok: false; reason: 'queue_full' } | { ok: false; reason: LengthRefusalReason; message: string };

/** SGLang stops sorting by prefix match once its queue is longer than this. */
const LPM_MAX_QUEUE = 128;
/**
 * SGLang's in-batch prefix caching: a waiting request with at most this many cached
 * tokens that shares at least this many with a request ahead of it is held back, so
 * the shared prefix is computed once and then hit.
 */
const IN_BATCH_PREFIX_TOKENS = 32;

/**
 * One DP rank of a simulated engine: an iteration-level discrete-event loop.
 *
 * Each step either forms a batch the way its flavour's scheduler does (SGLang: a
 * prefill batch under max_prefill_tokens and chunked_prefill_size, else a decode
 * batch; vLLM: running requests first, then waiting ones, under
 * max_num_batched_tokens) and lasts β0 + β1·prefill + β2·decode tokens, divided by
 * speedup. Admission stops at the first waiting request the running cap, the token
 * budget or KV memory refuses, so a long prompt holds those behind it, as in the real
 * engines. Prefix-cached blocks are not prefilled again, which is what cuts TTFT on a
 * hit. Steps chain on simulated time, so an engine whose timers fire late catches up.
 * The rules, and what they leave out: docs/simulator.md §Admission per flavour,
 * §Fidelity rules.
 */
export class EngineCore {
  readonly rank: number;
  readonly flavor: Flavor;
  readonly params: Readonly<EngineParams>;
  readonly cache: KvBlockCache;
  readonly counters: EngineCounters;

  private readonly clock: Clock;
  private readonly rng: Rng;
  /** Arrival order. Entries before waitingHead have left; admission may also take from the middle. */
  private waiting: SimRequest[] = [];
  private waitingHead = 0;
  /** Admitted requests, prefilling or decoding. SGLang's partially prefilled request is not here. */
  private running: SimRequest[] = [];
  /**
   * SGLang's one partially prefilled request between two of its chunks. SGLang keeps it
   * outside both the running batch and the waiting queue, and so does the report.
   */
  private chunked: SimRequest | undefined;
  /**
   * SGLang's batch_is_full: the last prefill pass stopped on the running cap or on KV
   * memory. Neither can change before a request leaves, so until then the waiting
   * queue is not looked at again (nor, under lpm, re-sorted).
   */
  private batchFull = false;
  /** Requests computed by the step under way. */
  private readonly batch: SimRequest[] = [];
  private stepTimer: TimerHandle | undefined;
  /** When the step under way ends, for the one callback every step's timer shares (no closure a step). */
  private stepEnd = 0;
  private readonly onStepEnd = (): void => this.endStep(this.stepEnd);
  private wakeTimer: TimerHandle | undefined;
  private nextId = 1;
  private lastHit = 0;
  private lastInput = 0;
  private readonly throughputWindow: Array<{ at: number; total: number }> = [];

  constructor(params: Readonly<EngineParams>, clock: Clock, seed: number, rank = 0, flavor: Flavor = 'sglang') {
    const bad = invalidEngineParams(params, flavor);
    if (bad !== undefined) throw new Error(`invalid engine parameters: ${bad}`);
    this.params = params;
    this.flavor = flavor;
    this.clock = clock;
    this.rank = rank;
    this.rng = new Rng(seed * 7919 + rank);
    this.cache = new KvBlockCache(params.kvBlocks);
    this.counters = newEngineCounters(flavor);
  }

  get waitingCount(): number {
    return this.waiting.length - this.waitingHead;
  }

  get runningCount(): number {
    return this.running.length;
  }

  /** Any request inside the rank, wherever it is. */
  get busy(): boolean {
    return this.running.length > 0 || this.chunked !== undefined || this.waitingCount > 0;
  }

  /**
   * Leading whole blocks of `tokens` this rank's cache holds now (pinned or not),
   * hashed as the rank hashes its prompts. Read-only: it neither pins nor touches the
   * eviction order. Benches read it to know which engine held a prompt's prefix.
   */
  heldPrefixBlocks(tokens: ArrayLike<number>): number {
    return this.cache.matchPrefix(blockHashes(tokens, this.params.blockSize));
  }

  submit(input: SubmitInput | KeyedSubmitInput, observer: RequestObserver): SubmitResult {
    const p = this.params;
    const maxTokens = Math.max(0, Math.floor(input.maxTokens));
    const promptLength = 'prompt' in input ? input.prompt.length : input.promptTokens.length;
    if ('prompt' in input && input.prompt.blockSize !== p.blockSize) {
      throw new Error(`a prompt keyed in blocks of ${input.prompt.blockSize} tokens, for an engine with blocks of ${p.blockSize}`);
    }
    // The engine's own length checks; what passes them fits an empty engine's KV memory,
    // so no request can block the queue forever.
    const refusal = checkLength(this.flavor, p, promptLength, maxTokens);
    if (refusal) return { ok: false, reason: refusal.reason, message: refusal.message };
    // vLLM's admission cap counts every unfinished request, and is off unless set; SGLang's flavour caps the waiting queue.
    const full =
      this.flavor === 'vllm'
        ? p.maxNumQueuedReqs !== null && this.waitingCount + this.runningCount >= p.maxNumQueuedReqs
        : this.waitingCount >= p.maxQueued;
    if (full) {
      this.counters.admissionRejectedTotal++;
      return { ok: false, reason: 'queue_full' };
    }

    const now = this.clock.now();
    const outputLen = input.ignoreEos
      ? maxTokens
      : Math.max(1, Math.min(maxTokens, Math.round(this.rng.lognormal(p.outputMedianTokens, p.outputSigma))));
    const overhead = (p.alpha0Ms + p.alpha1Ms * promptLength) / p.speedup;
    const req = new SimRequest(
      this.nextId++,
      'prompt' in input ? input.prompt : tokenPrompt(input.promptTokens, p.blockSize),
      input.maxTokens,
      Math.min(outputLen, maxTokens),
      now,
      now + overhead,
      observer,
    );
    req.rank = this.rank;
    this.counters.requestsTotal++;
    this.waiting.push(req);
    // A step under way looks at it when it ends; a pending wake-up is for a request ahead of it.
    if (!this.stepTimer && !this.wakeTimer) this.startStep(now);
    return { ok: true, request: req };
  }

  /** Remove a request wherever it is (client went away); frees its KV memory. */
  abort(req: SimRequest): void {
    if (req.state === 'finished' || req.state === 'aborted') return;
    if (req.state === 'waiting') {
      const i = this.waiting.indexOf(req, this.waitingHead);
      if (i >= 0) this.waiting.splice(i, 1);
    } else {
      if (this.chunked === req) {
        this.chunked = undefined;
      } else {
        const i = this.running.indexOf(req);
        if (i >= 0) this.running.splice(i, 1);
      }
      this.cache.releaseChain(req, req.anonymousBlocks);
      this.batchFull = false;
    }
    req.state = 'aborted';
    req.finishReason = 'abort';
    req.finishedAt = this.clock.now();
    this.counters.abortedTotal++;
    req.observer.onFinish(req);
  }

  load(): EngineLoad {
    const bs = this.params.blockSize;
    let waitingTokens = 0;
    let uncached = 0;
    for (let i = this.waitingHead; i < this.waiting.length; i++) {
      const r = this.waiting[i]!;
      waitingTokens += r.promptTokens;
      uncached += Math.max(0, r.promptTokens - r.matchedTokens);
    }
    const lpm = this.flavor === 'sglang' && this.params.schedulePolicy === 'lpm';
    // What is left of the chunked request once the chunk under way is done.
    const chunkRest = this.chunked ? this.chunked.prefillRemaining - this.chunked.stepChunk : 0;
    let blocks = this.cache.pinnedBlocks();
    for (const r of this.running) blocks += allocatedAnonymousBlocks(r, bs);
    if (this.chunked) blocks += allocatedAnonymousBlocks(this.chunked, bs);
    const used = blocks * bs;
    const capacity = this.params.kvBlocks * bs;
    return {
      running: this.running.length,
      waiting: this.waitingCount,
      usedTokens: used,
      totalTokens: used + waitingTokens,
      maxTotalTokens: capacity,
      waitingTokens,
      waitingUncachedTokens: (lpm ? uncached : waitingTokens) + chunkRest,
      tokenUsage: capacity > 0 ? used / capacity : 0,
      cacheHitRate: this.lastHit + this.lastInput > 0 ? this.lastHit / (this.lastHit + this.lastInput) : 0,
      genThroughput: this.throughput(),
    };
  }

  /** Drop unreferenced cached blocks; refused (false) while requests are in the engine. */
  flushCache(): boolean {
    if (this.busy) return false;
    this.cache.flush();
    return true;
  }

  /** Stop timers; requests still inside are aborted. */
  close(): void {
    if (this.stepTimer) this.clock.cancel(this.stepTimer);
    if (this.wakeTimer) this.clock.cancel(this.wakeTimer);
    this.stepTimer = this.wakeTimer = undefined;
    const inside = [...this.running, ...(this.chunked ? [this.chunked] : []), ...this.waiting.slice(this.waitingHead)];
    for (const r of inside) this.abort(r);
  }

  private startStep(t: number): void {
    const p = this.params;
    let prefill: number;
    let decode = 0;
    if (this.flavor === 'sglang') {
      prefill = this.sglangPrefillBatch(t);
      // Prefill goes first; a decode step runs only when no prefill batch could be formed.
      if (this.batch.length === 0) {
        for (const r of this.running) {
          r.decodingThisStep = true;
          this.batch.push(r);
        }
        decode = this.batch.length;
      }
    } else {
      [prefill, decode] = this.vllmSchedule(t);
    }
    if (this.batch.length === 0) {
      this.sleepUntilReady(t);
      return;
    }
    const duration = (p.beta0Ms + p.beta1Ms * prefill + p.beta2Ms * decode) / p.speedup;
    this.stepEnd = t + duration;
    this.stepTimer = this.clock.schedule(this.stepEnd, this.onStepEnd);
  }

  /**
   * SGLang's prefill batch: the chunked request continues first, then waiting requests
   * in policy order while the running cap, max_prefill_tokens (a request other than
   * the first must need less than what is left of it), chunked_prefill_size (a
   * request that does not fit is cut to what is left, and becomes the one chunked
   * request) and KV memory allow. Returns the prefill tokens of the batch.
   */
  private sglangPrefillBatch(t: number): number {
    const p = this.params;
    const bs = p.blockSize;
    const page = (n: number): number => Math.ceil(n / bs) * bs;
    let remInput = p.maxPrefillTokens;
    let remChunk = p.chunkedPrefillSize > 0 ? p.chunkedPrefillSize : Infinity;
    let tokens = 0;
    let hit = 0;

    const c = this.chunked;
    if (!c && this.batchFull) return 0;
    if (c) {
      const n = c.prefillRemaining <= remChunk ? c.prefillRemaining : Math.floor(remChunk / bs) * bs;
      c.stepChunk = n;
      this.batch.push(c);
      tokens += n;
      remInput -= page(n);
      remChunk -= page(n);
      if (n === c.prefillRemaining) {
        // Its last chunk: from here on it is an ordinary running request.
        this.chunked = undefined;
        this.running.push(c);
      }
    }

    const lpm = this.lpmOrder(t);
    let admitted = 0;
    for (let i = lpm ? 0 : this.waitingHead; i < (lpm ? lpm.length : this.waiting.length); i++) {
      const r = lpm ? lpm[i]! : this.waiting[i]!;
      if (r.readyAt > t) break; // not in the scheduler's queue yet, nor anything behind it (docs/simulator.md §Arrival)
      if (this.running.length + (this.chunked ? 1 : 0) >= p.maxRunning) {
        this.batchFull = true;
        break;
      }
      const hits = this.prefixHits(r);
      const extend = r.promptTokens - hits * bs;
      if (this.batch.length > 0 && page(extend) >= remInput) break;
      let chunk = extend;
      if (page(extend) > remChunk) {
        chunk = Math.floor(remChunk / bs) * bs;
        if (chunk <= 0) break;
      }
      if (!this.admit(r, hits, t)) {
        this.batchFull = true;
        break;
      }
      admitted++;
      r.stepChunk = chunk;
      this.batch.push(r);
      tokens += chunk;
      hit += r.cachedTokens;
      if (chunk < extend) this.chunked = r;
      else this.running.push(r);
      remInput -= page(chunk);
      remChunk -= page(chunk);
      if (remInput <= 0 || remChunk <= 0) break;
    }
    if (admitted > 0) this.dropAdmitted(lpm !== undefined);
    if (tokens > 0) {
      this.lastHit = hit;
      this.lastInput = tokens;
    }
    return tokens;
  }

  /**
   * vLLM v1's schedule: running requests first, in order (a decode costs one token of
   * budget, a prefill chunk what it computes, capped by long_prefill_token_threshold),
   * then waiting requests while max_num_batched_tokens and max_num_seqs allow, each
   * taking a chunk of what budget is left. Returns [prefill, decode] tokens.
   */
  private vllmSchedule(t: number): [number, number] {
    const p = this.params;
    const bs = p.blockSize;
    const cap = p.longPrefillTokenThreshold > 0 ? p.longPrefillTokenThreshold : Infinity;
    let budget = p.maxNumBatchedTokens;
    let prefill = 0;
    let decode = 0;
    for (const r of this.running) {
      if (budget <= 0) break;
      if (r.prefillRemaining > 0) {
        const n = Math.min(r.prefillRemaining, cap, budget);
        r.stepChunk = n;
        budget -= n;
        prefill += n;
      } else {
        r.decodingThisStep = true;
        budget -= 1;
        decode++;
      }
      this.batch.push(r);
    }
    let admitted = 0;
    let hit = 0;
    let input = 0;
    for (let i = this.waitingHead; i < this.waiting.length && budget > 0; i++) {
      if (this.running.length >= p.maxRunning) break;
      const r = this.waiting[i]!;
      if (r.readyAt > t) break; // not in the scheduler's queue yet, nor anything behind it (docs/simulator.md §Arrival)
      const hits = this.prefixHits(r);
      const n = Math.min(r.promptTokens - hits * bs, cap, budget);
      if (!this.admit(r, hits, t)) break;
      admitted++;
      r.stepChunk = n;
      this.running.push(r);
      this.batch.push(r);
      budget -= n;
      prefill += n;
      hit += r.cachedTokens;
      input += n;
    }
    if (admitted > 0) {
      this.dropAdmitted(false);
      this.lastHit = hit;
      this.lastInput = input;
    }
    return [prefill, decode];
  }

  /**
   * End of the scheduler's queue within `waiting`. Requests reach the scheduler in
   * arrival order, each once its arrival overhead is over and not before the one
   * ahead of it, as through one tokenizer; the rest count as waiting but cannot be
   * scheduled yet (docs/simulator.md §Arrival).
   */
  private visibleEnd(t: number): number {
    let i = this.waitingHead;
    while (i < this.waiting.length && this.waiting[i]!.readyAt <= t) i++;
    return i;
  }

  /**
   * SGLang's lpm order over the scheduler's queue: longest cached prefix first, ties
   * in arrival order, and requests held back by in-batch prefix caching last.
   * Undefined when the policy is fcfs or the queue is too long to sort.
   */
  private lpmOrder(t: number): SimRequest[] | undefined {
    if (this.flavor !== 'sglang' || this.params.schedulePolicy !== 'lpm') return undefined;
    const end = this.visibleEnd(t);
    const count = end - this.waitingHead;
    if (count === 0 || count > LPM_MAX_QUEUE) return undefined;
    const ready = this.waiting.slice(this.waitingHead, end);
    const bs = this.params.blockSize;
    const seen = new Set<number>();
    const heldBack = new Set<SimRequest>();
    for (const r of ready) {
      r.matchedTokens = this.prefixHits(r) * bs;
      if (r.matchedTokens > IN_BATCH_PREFIX_TOKENS) continue;
      const h = r.promptHashes;
      let shared = 0;
      while (shared < h.length && seen.has(h[shared]!)) shared++;
      if (shared * bs >= IN_BATCH_PREFIX_TOKENS) heldBack.add(r);
      else for (const x of h) seen.add(x);
    }
    // Array.prototype.sort is stable, which keeps arrival order among equals.
    return ready.sort((a, b) => {
      const ha = heldBack.has(a);
      const hb = heldBack.has(b);
      if (ha !== hb) return ha ? 1 : -1;
      return ha ? 0 : b.matchedTokens - a.matchedTokens;
    });
  }

  /** Leading prompt blocks cached now; the last prompt token is always computed, so never all of them. */
  private prefixHits(r: SimRequest): number {
    const maxHits = Math.min(Math.floor((r.promptTokens - 1) / this.params.blockSize), r.promptHashes.length);
    return this.cache.matchPrefix(r.promptHashes, Math.max(0, maxHits));
  }

  /**
   * Give a waiting request its KV memory: pin its cached prefix and reserve blocks for
   * the rest of the prompt and its whole output, so a running request never runs out
   * (docs/simulator.md §KV memory). False, and nothing changed, when it does not fit.
   */
  private admit(r: SimRequest, hits: number, t: number): boolean {
    const bs = this.params.blockSize;
    const reserve = Math.ceil((r.promptTokens + r.outputLen) / bs) - hits;
    if (!this.cache.admit(r, r.promptHashes, hits, reserve)) return false;
    r.state = 'running';
    r.admittedAt = t;
    r.pinnedCount = hits;
    r.anonymousBlocks = reserve;
    r.promptBlocksCommitted = hits;
    r.cachedTokens = hits * bs;
    r.prefillRemaining = r.promptTokens - r.cachedTokens;
    this.counters.promptTokensTotal += r.promptTokens;
    this.counters.cachedTokensTotal += r.cachedTokens;
    this.counters.queue.observe((t - r.arrivalAt) / 1000);
    return true;
  }

  /** Take admitted requests out of the waiting array. */
  private dropAdmitted(fromMiddle: boolean): void {
    const w = this.waiting;
    if (fromMiddle) {
      this.waiting = w.slice(this.waitingHead).filter((r) => r.state === 'waiting');
      this.waitingHead = 0;
      return;
    }
    while (this.waitingHead < w.length && w[this.waitingHead]!.state !== 'waiting') this.waitingHead++;
    if (this.waitingHead > 64 && this.waitingHead * 2 > w.length) {
      this.waiting = w.slice(this.waitingHead);
      this.waitingHead = 0;
    }
  }

  /** Nothing to compute now: wake when the next request reaches the scheduler. */
  private sleepUntilReady(t: number): void {
    const next = this.waiting[this.visibleEnd(t)];
    // Otherwise idle. A visible request that cannot be admitted with nothing running
    // cannot exist: submit refuses what would not fit an empty engine.
    if (!next) return;
    const at = next.readyAt;
    this.wakeTimer = this.clock.schedule(at, () => {
      this.wakeTimer = undefined;
      if (!this.stepTimer) this.startStep(at);
    });
  }

  private endStep(t: number): void {
    this.stepTimer = undefined;
    let finished = false;
    const batch = this.batch;
    for (const r of batch) {
      if (r.state !== 'running') continue; // aborted during the step
      if (r.stepChunk > 0) {
        r.prefillRemaining -= r.stepChunk;
        r.stepChunk = 0;
        if (r.prefillRemaining === 0) {
          this.commitPromptBlocks(r);
          this.emit(r, t);
        }
      } else if (r.decodingThisStep) {
        r.decodingThisStep = false;
        this.emit(r, t);
      }
      if (r.state === 'running' && r.prefillRemaining === 0 && r.output.length >= r.outputLen) finished = true;
    }
    batch.length = 0;
    if (finished) {
      this.batchFull = false;
      const still: SimRequest[] = [];
      for (const r of this.running) {
        if (r.state === 'running' && r.prefillRemaining === 0 && r.output.length >= r.outputLen) this.finish(r, t);
        else if (r.state === 'running') still.push(r);
      }
      this.running = still;
    }
    if (this.busy) this.startStep(t);
  }

  private emit(r: SimRequest, t: number): void {
    if (r.outputLen === 0) return;
    const word = nextOutputWord(this.rng);
    r.output.push(outputWordId(word));
    this.counters.generationTokensTotal++;
    if (r.output.length === 1) {
      r.firstTokenAt = t;
      this.counters.ttft.observe((t - r.arrivalAt) / 1000);
    } else {
      this.counters.itl.observe((t - r.lastTokenAt) / 1000);
      r.tokenGapsMs += t - r.lastTokenAt;
    }
    r.lastTokenAt = t;
    r.observer.onToken(outputWordPiece(word), r.output.length - 1, t);
  }

  private commitPromptBlocks(r: SimRequest): void {
    const full = r.promptHashes.length;
    if (full > r.promptBlocksCommitted) {
      this.cache.commit(r, r.promptHashes, r.promptBlocksCommitted, full, () => r.prompt.tokens());
      r.anonymousBlocks -= full - r.promptBlocksCommitted;
      r.pinnedCount = full;
      r.promptBlocksCommitted = full;
    }
  }

  private finish(r: SimRequest, t: number): void {
    // Generated blocks become cacheable too: the next turn of a conversation hits them.
    // The prompt's whole blocks are keyed already; only the blocks after them are new.
    const after = r.prompt.keysAfter(r.output);
    const all = after.length > 0 ? r.promptHashes.concat(after) : r.promptHashes;
    if (all.length > r.pinnedCount) {
      this.cache.commit(r, all, r.pinnedCount, all.length, () => r.prompt.tokens().concat(r.output));
      r.anonymousBlocks -= all.length - r.pinnedCount;
    }
    this.cache.releaseChain(r, r.anonymousBlocks);
    r.pinnedCount = 0;
    r.anonymousBlocks = 0;
    r.state = 'finished';
    r.finishReason = r.output.length >= r.maxTokens ? 'length' : 'stop';
    r.finishedAt = t;
    if (r.finishReason === 'length') this.counters.finishedLengthTotal++;
    else this.counters.finishedStopTotal++;
    this.counters.e2e.observe((t - r.arrivalAt) / 1000);
    this.recordThroughput(t);
    r.observer.onFinish(r);
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
}

/**
 * Blocks of a request's reservation that already hold KV: its computed prompt (the
 * chunk under way included, as the engines allocate before the forward pass) and its
 * output so far, beyond the shared cached blocks it pins. The rest of the reservation
 * is promised but still free, which is how both engines count it.
 */
function allocatedAnonymousBlocks(r: SimRequest, bs: number): number {
  const allocated = r.promptTokens - r.prefillRemaining + r.stepChunk + r.output.length;
  const beyondPinned = allocated - r.pinnedCount * bs;
  return beyondPinned > 0 ? Math.min(r.anonymousBlocks, Math.ceil(beyondPinned / bs)) : 0;
}
