import type { RouterConfig } from '../config/index.js';
import { blockHashes } from '../prefix/index.js';
import type { CacheAwareDecision } from '../router/index.js';
import type { EngineParams, Flavor } from '../sim/index.js';
import { tracePromptTokens } from '../workload/index.js';
import type { TraceRequest } from '../workload/index.js';
import { VirtualFleet } from './virtual-fleet.js';

export interface TraceRunOptions {
  config: RouterConfig;
  workers: number;
  engine?: Partial<EngineParams> | undefined;
  flavor?: Flavor | undefined;
  seed: number;
  /** Arrivals in order, re-timed from 0 (selectTrace). */
  trace: readonly TraceRequest[];
  /** Tokens per hash id in the trace (512 in the published Mooncake traces). */
  traceBlockSize: number;
}

export interface TraceRunResult {
  requests: number;
  finished: number;
  /** Requests an engine refused (too long for its KV cache). */
  refused: number;
  /** Requests the policy could not place. */
  failures: number;
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

/**
 * A trace replayed through the router's real selection code on simulated time
 * (docs/bench.md §Virtual clock): the same VirtualFleet as runVirtual, with requests
 * arriving at the trace's times as token prompts (keyed as the router keys
 * `input_ids`), each independent of the others. Deterministic for a seed.
 */
export function runTraceVirtual(opts: TraceRunOptions): TraceRunResult {
  const c = opts.config;
  const fleet = new VirtualFleet({ config: c, workers: opts.workers, engine: opts.engine, flavor: opts.flavor, seed: opts.seed });
  const { clock, engines, workers, table, index, prefix, policy, random } = fleet;
  const result: TraceRunResult = {
    requests: opts.trace.length,
    finished: 0,
    refused: 0,
    failures: 0,
    decisions: { cache_hit: 0, cache_miss: 0, cache_worker_queued: 0, all_queued: 0 },
    divertedBlocks: 0,
    promptTokens: 0,
    cachedTokens: 0,
    outputTokens: 0,
    ttftMs: [],
    itlMs: [],
    spanS: 0,
  };
  const last = opts.trace.at(-1)?.atMs ?? 0;
  fleet.startSampling(last + c.loadPollIntervalMs);
  let lastFinish = 0;

  const send = (r: TraceRequest): void => {
    const now = clock.now();
    const tokens = tracePromptTokens(r, opts.traceBlockSize);
    const hashes = blockHashes(tokens, c.blockSize);
    const view = table.view(now);
    const hints = policy.usesPrefix ? new Int32Array(hashes.length) : undefined;
    const outcome = policy.select({ pool: view, load: view, inputTokens: tokens.length, prefix: policy.usesPrefix ? prefix.signal(hashes, hints) : undefined, random });
    if (!outcome.ok) {
      result.failures++;
      return;
    }
    if (outcome.decision) result.decisions[outcome.decision]++;
    if (outcome.divertedOverlapBlocks !== undefined) result.divertedBlocks += outcome.divertedOverlapBlocks;
    const slot = outcome.worker.slot;
    const worker = workers[slot]!;
    let first: number | undefined;
    let prev = 0;
    let gaps = 0;
    let n = 0;
    worker.inflight++;
    const submitted = engines[slot]!.submit(
      { promptTokens: tokens, maxTokens: r.outputLength, ignoreEos: true },
      {
        onToken(_piece, _index, at) {
          if (first === undefined) first = at;
          else gaps += at - prev;
          prev = at;
          n++;
        },
        onFinish() {
          worker.inflight--;
          result.finished++;
          result.outputTokens += n;
          if (first !== undefined) result.ttftMs.push(first - now);
          if (n > 1) result.itlMs.push(gaps / (n - 1));
          lastFinish = Math.max(lastFinish, clock.now());
        },
      },
    );
    if (!submitted.ok) {
      worker.inflight--;
      result.refused++;
      return;
    }
    // The router records owners only for a policy that reads them (docs/routing.md).
    if (hints !== undefined) index.record(slot, hashes, hashes.length, hints);
  };
  for (const r of opts.trace) clock.schedule(r.atMs, () => send(r));
  clock.runUntilIdle();
  const tokens = fleet.finish();
  result.promptTokens = tokens.promptTokens;
  result.cachedTokens = tokens.cachedTokens;
  result.spanS = Math.max(lastFinish, last) / 1000;
  return result;
}
