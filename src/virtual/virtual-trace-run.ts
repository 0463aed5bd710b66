import type { RouterConfig } from '../config/index.js';
import { blockHashes } from '../prefix/index.js';
import { HOLD_RECHECK_MS, predictedUncachedTokens, sloAdmission } from '../router/index.js';
import type { CacheAwareDecision } from '../router/index.js';
import type { EngineParams, Flavor, KeyedPrompt } from '../sim/index.js';
import { tokenPrompt } from '../sim/index.js';
import { traceBlockKeys, traceFollowers, traceKeyable, tracePrompt, tracePromptTokens } from '../workload/index.js';
import type { TraceRequest } from '../workload/index.js';
import type { PrefillEstimate } from '../router/index.js';
import { VirtualFleet } from './virtual-fleet.js';
import { countRefusal, emptyRefusalCounts } from './refusal-counts.js';
import type { RefusalCounts } from './refusal-counts.js';

export interface TraceRunOptions {
  config: RouterConfig;
  workers: number;
  engine?: Partial<EngineParams> | undefined;
  /** Per engine, over `engine` (VirtualFleetOptions.engines). */
  engines?: ReadonlyArray<Partial<EngineParams> | undefined> | undefined;
  flavor?: Flavor | undefined;
  seed: number;
  /** Arrivals in order, re-timed from 0 (selectTrace). */
  trace: readonly TraceRequest[];
  /** Tokens per hash id in the trace (512 in the published Mooncake traces). */
  traceBlockSize: number;
  /**
   * How prompts are keyed into blocks, for the router and the engines alike:
   * `trace-ids` from the trace's hash ids (traceBlockKeys; no token arrays), when both
   * block sizes divide the trace's, else `tokens`: the prompt's tokens made and hashed.
   * The two give the same run (test/virtual/trace-keying.test.ts); the first is faster.
   */
  keying?: 'trace-ids' | 'tokens' | undefined;
  /** What the prefix index is built from (VirtualFleetOptions); requests when absent. */
  prefixSource?: 'requests' | 'events' | undefined;
  kvEventDelayMs?: number | undefined;
  /** Each engine's load readings as they enter the load table (VirtualFleet.startSampling). */
  onReading?: Parameters<VirtualFleet['startSampling']>[1];
}

export interface TraceRunResult {
  requests: number;
  finished: number;
  /** Requests an engine refused: for length (context or KV pool) or a full queue. */
  refused: number;
  /** The refusals by the engine's reason (docs/simulator.md §Refusals for length); they add up to `refused`, but for injected failures. */
  refusedBy: RefusalCounts;
  /** Requests the policy could not place. */
  failures: number;
  /** Requests `--admission slo` answered 429: never sent, never booked, a miss in goodput (docs/routing.md §SLO admission). */
  shed: number;
  decisions: Record<CacheAwareDecision, number>;
  /** Prefix blocks the gate gave up, summed over diversions. */
  divertedBlocks: number;
  promptTokens: number;
  cachedTokens: number;
  outputTokens: number;
  /** Per finished request, simulated ms: time to first token, and the mean gap between its tokens. */
  ttftMs: number[];
  itlMs: number[];
  /** Simulated seconds from the first arrival to the last finish. */
  spanS: number;
}

/** A virtual run's figures, and each request's own outcome, which only the virtual clock keeps. */
export interface VirtualTraceRunResult extends TraceRunResult {
  /**
   * Per trace request, in trace order: its time to first token in simulated ms (from
   * when it was sent), NaN when it got none (refused, or not placed). The same values
   * as `ttftMs`, by request: what lets `bench compare --recommend` slice one replay
   * into windows by arrival (docs/bench.md §Recommend). One array per run.
   */
  ttftMsByRequest: Float64Array;
  /** Per trace request, in trace order: 1 when --admission slo shed it. */
  shedByRequest: Uint8Array;
  /** Each engine's prefill rate as the router learnt it over the run (docs/routing.md §Learned prefill rate), by engine. */
  learnedPrefill: Array<PrefillEstimate | null>;
}

/** A run's figures before its first request: every count zero. */
export function emptyTraceResult(requests: number): TraceRunResult {
  return {
    requests,
    finished: 0,
    refused: 0,
    refusedBy: emptyRefusalCounts(),
    failures: 0,
    shed: 0,
    decisions: { cache_hit: 0, cache_miss: 0, cache_worker_queued: 0, all_queued: 0 },
    divertedBlocks: 0,
    promptTokens: 0,
    cachedTokens: 0,
    outputTokens: 0,
    ttftMs: [],
    itlMs: [],
    spanS: 0,
  };
}

/**
 * A trace replayed through the router's real selection code on simulated time
 * (docs/bench.md §Virtual clock): the same VirtualFleet as runVirtual, with requests
 * arriving at the trace's times as token prompts (keyed as the router keys
 * `input_ids`), each independent of the others. Deterministic for a seed.
 */
export function runTraceVirtual(opts: TraceRunOptions): VirtualTraceRunResult {
  const c = opts.config;
  // The run's options are the fleet's, and more.
  const fleet = new VirtualFleet(opts);
  const { clock, engines, workers, table, prefix, policy, random } = fleet;
  const result: VirtualTraceRunResult = {
    ...emptyTraceResult(opts.trace.length),
    ttftMsByRequest: new Float64Array(opts.trace.length).fill(NaN),
    shedByRequest: new Uint8Array(opts.trace.length),
    learnedPrefill: [],
  };
  // --admission slo (docs/routing.md §SLO admission): a request the selected engine would start too late is held and placed again, or shed, as the HTTP front does it.
  const goalMs = c.admission === 'slo' ? c.ttftSloMs : null;
  // Later turns of a conversation wait for the turn they follow.
  const next = traceFollowers(opts.trace);
  let outstanding = opts.trace.length;
  const last = opts.trace.reduce((m, r) => (r.after === undefined ? Math.max(m, r.atMs) : m), 0);
  // Held requests, like later turns, outlive the last arrival: sampling goes on while anything is outstanding.
  fleet.startSampling(next.size === 0 && goalMs === null ? last + c.loadPollIntervalMs : () => outstanding > 0, opts.onReading);
  let lastFinish = 0;
  const engineBlock = fleet.params.blockSize;
  const byIds =
    opts.keying !== 'tokens' && traceKeyable(opts.traceBlockSize, c.blockSize) && traceKeyable(opts.traceBlockSize, engineBlock);
  /** The router's keys for a request's prompt, and the prompt as the engines key it: one chain of keys when the block sizes agree. */
  const keyed = (r: TraceRequest): { hashes: number[]; prompt: KeyedPrompt } => {
    if (!byIds) {
      const tokens = tracePromptTokens(r, opts.traceBlockSize);
      return { hashes: blockHashes(tokens, c.blockSize), prompt: tokenPrompt(tokens, engineBlock) };
    }
    const hashes = traceBlockKeys(r, opts.traceBlockSize, c.blockSize);
    const engineKeys = engineBlock === c.blockSize ? hashes : traceBlockKeys(r, opts.traceBlockSize, engineBlock);
    return { hashes, prompt: tracePrompt(r, opts.traceBlockSize, engineBlock, engineKeys) };
  };
  let hintScratch = new Int32Array(0);
  const settled = (i: number): void => {
    outstanding--;
    for (const j of next.get(i) ?? []) clock.schedule(clock.now() + opts.trace[j]!.atMs, () => send(j));
  };

  const send = (i: number, arrivedAt = clock.now()): void => {
    const r = opts.trace[i]!;
    const now = clock.now();
    const { hashes, prompt } = keyed(r);
    const view = table.view(now);
    // Where the index found each block, for its record below: one scratch array for every request (a stale hint only falls back to a probe).
    if (policy.usesPrefix && hintScratch.length < hashes.length)
      hintScratch = new Int32Array(Math.max(hashes.length, 2 * hintScratch.length));
    const hints = policy.usesPrefix ? hintScratch : undefined;
    const signal = policy.usesPrefix ? prefix.signal(hashes, hints) : undefined;
    const outcome = policy.select({ pool: view, load: view, inputTokens: r.inputLength, prefix: signal, random });
    if (!outcome.ok) {
      result.failures++;
      settled(i);
      return;
    }
    if (goalMs !== null) {
      const own = predictedUncachedTokens(r.inputLength, signal, outcome.worker, c.blockSize);
      const verdict = sloAdmission(goalMs, now - arrivedAt, outcome.worker, own, view);
      if (verdict === 'hold') {
        clock.schedule(now + HOLD_RECHECK_MS, () => send(i, arrivedAt));
        return;
      }
      if (verdict === 'shed') {
        result.shed++;
        result.shedByRequest[i] = 1;
        settled(i);
        return;
      }
    }
    const cacheAware = outcome.cacheAware;
    if (cacheAware?.decision) result.decisions[cacheAware.decision]++;
    if (cacheAware?.divertedOverlapBlocks !== undefined) result.divertedBlocks += cacheAware.divertedOverlapBlocks;
    const slot = outcome.worker.slot;
    const worker = workers[slot]!;
    worker.inflight++;
    const prefill = fleet.prefillTicket(slot, r.inputLength, signal);
    // What the run keeps of a request's tokens, the engine keeps on the request itself
    // (its first token's time, its gaps summed in order): no state of our own a token.
    const submitted = engines[slot]!.submitKeyed(
      { prompt, maxTokens: r.outputLength, ignoreEos: true },
      {
        onToken() {
          const t = clock.now();
          prefill.arrived(t - now, t);
        },
        onFinish(req) {
          worker.inflight--;
          // The engine's own count of what it computed, as its usage reports it.
          if (req.output.length > 0) prefill.firstByte(req.firstTokenAt - now, r.inputLength - req.cachedTokens);
          else prefill.begun();
          // The client's TTFT counts the time the router held the request too.
          const ttft = req.firstTokenAt - arrivedAt;
          const n = req.output.length;
          result.finished++;
          result.outputTokens += n;
          if (n > 0) {
            result.ttftMs.push(ttft);
            result.ttftMsByRequest[i] = ttft;
          }
          if (n > 1) result.itlMs.push(req.tokenGapsMs / (n - 1));
          lastFinish = Math.max(lastFinish, clock.now());
          settled(i);
        },
      },
    );
    if (!submitted.ok) {
      worker.inflight--;
      prefill.begun();
      countRefusal(result, submitted.reason);
      settled(i);
      return;
    }
    // The router records owners only for a policy that reads them (docs/routing.md).
    if (hints !== undefined) fleet.recordSent(slot, hashes, hints);
  };
  opts.trace.forEach((r, i) => {
    if (r.after === undefined) clock.schedule(r.atMs, () => send(i));
  });
  clock.runUntilIdle();
  result.learnedPrefill = fleet.learnedPrefill();
  const tokens = fleet.finish();
  result.promptTokens = tokens.promptTokens;
  result.cachedTokens = tokens.cachedTokens;
  result.spanS = Math.max(lastFinish, last) / 1000;
  return result;
}
