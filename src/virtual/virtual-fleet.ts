import type { RouterConfig } from '../config/index.js';
import { readV1Loads } from '../engines/index.js';
import type { RankReading } from '../engines/index.js';
import { LoadTable, PredictedPrefixes, PrefixIndex, PrefixLookup, createPolicy, queueGate } from '../router/index.js';
import type { PolicyWorker } from '../router/index.js';
import type { PrefixSignal } from '../router/index.js';
import { PrefillEstimator, PrefillTicket, predictedUncachedTokens } from '../router/index.js';
import type { PrefillEstimate } from '../router/index.js';
import { DEFAULT_ENGINE_PARAMS, ManualClock, Rng, SimEngine } from '../sim/index.js';
import type { EngineParams, Flavor } from '../sim/index.js';
import { coreKeys } from '../sim/index.js';
import { VirtualKvEvents } from './virtual-kv-events.js';

export interface VirtualFleetOptions {
  config: RouterConfig;
  workers: number;
  engine?: Partial<EngineParams> | undefined;
  /** Per engine, over `engine`: a fleet that mixes GPUs (engine i takes entry i). */
  engines?: ReadonlyArray<Partial<EngineParams> | undefined> | undefined;
  flavor?: Flavor | undefined;
  seed: number;
  /** What the prefix index is built from: what the router sent where (default), or the engines' KV events (VirtualKvEvents). */
  prefixSource?: 'requests' | 'events' | undefined;
  /** Under events: step end to index, simulated ms (DEFAULT_KV_EVENT_DELAY_MS when absent). */
  kvEventDelayMs?: number | undefined;
}

/**
 * The simulated engines and the router's own selection state (policy, load table,
 * prefix index) on one ManualClock: what every virtual run is made of. Built in a
 * fixed order, so a seed gives the same run.
 */
export class VirtualFleet {
  readonly clock = new ManualClock(0);
  readonly params: EngineParams;
  readonly engines: SimEngine[];
  readonly workers: Array<PolicyWorker & { inflight: number; readonly prefill: PrefillEstimator }>;
  readonly table: LoadTable;
  readonly index: PrefixIndex;
  readonly prefix: PrefixLookup;
  readonly policy: ReturnType<typeof createPolicy>;
  readonly random: () => number;
  /** Under an events index, the engines' events on their way to it. */
  readonly kvEvents: VirtualKvEvents | undefined;

  constructor(readonly o: VirtualFleetOptions) {
    const c = o.config;
    this.params = { ...DEFAULT_ENGINE_PARAMS, ...o.engine };
    this.engines = Array.from(
      { length: o.workers },
      (_, i) =>
        new SimEngine({
          flavor: o.flavor ?? 'sglang',
          model: 'virtual',
          dpSize: 1,
          params: o.engines?.[i] === undefined ? this.params : { ...this.params, ...o.engines[i] },
          seed: o.seed + i,
          clock: this.clock,
        }),
    );
    this.workers = this.engines.map((_, i) => ({ id: `virtual://engine-${i}`, slot: i, inflight: 0, prefill: new PrefillEstimator() }));
    this.table = new LoadTable(c.loadFreshnessMs);
    const gate = queueGate(c);
    this.table.setGate(gate);
    for (const w of this.workers) {
      this.table.register(w);
      this.table.setExpectedRanks(w, 1);
      this.table.setUncachedTrusted(w, this.params.schedulePolicy === 'lpm');
      this.table.setInPool(w, true);
    }
    this.index = new PrefixIndex({ maxBlocks: c.prefixIndexMaxBlocks });
    this.prefix = new PrefixLookup(
      this.index,
      (slot) => this.workers[slot],
      () => true,
    );
    this.policy = createPolicy(c, gate);
    // Under events, the index learns from the engines, and the router remembers where it sent what for the event gap, as applyPrefixSource sets it up.
    this.kvEvents = o.prefixSource === 'events' ? new VirtualKvEvents(this.engines, this.index, this.clock, o.kvEventDelayMs) : undefined;
    if (this.kvEvents && c.predictedPrefixTtlMs > 0)
      this.prefix.predicted = new PredictedPrefixes({
        ttlMs: c.predictedPrefixTtlMs,
        capacity: 4096 /* the router's PREDICTED_PREFIXES */,
        now: () => this.clock.now(),
      });
    const rng = new Rng(o.seed ^ 0x2545f491);
    this.random = () => rng.next();
  }

  /**
   * Poll every engine's load at the configured interval until `endMs` (or while it
   * says there is more to come), through the
   * same /v1/loads reader as over HTTP (so freshness and staleness are modelled);
   * `onReading` sees each engine's readings as they enter the load table.
   */
  startSampling(
    endMs: number | (() => boolean),
    onReading?: (now: number, engine: number, readings: Iterable<readonly [number, RankReading]>) => void,
    onRound?: (now: number) => void,
  ): void {
    const sample = (): void => {
      const now = this.clock.now();
      this.engines.forEach((e, i) => {
        const read = readV1Loads({ loads: e.reportedLoads().map((l, rank) => coreKeys(rank, l, e)) });
        if (!read.ok) return;
        this.table.apply(this.workers[i]!, read.readings, now);
        onReading?.(now, i, read.readings);
      });
      onRound?.(now);
      const more = typeof endMs === 'number' ? now + this.o.config.loadPollIntervalMs < endMs : endMs();
      if (more) this.clock.schedule(now + this.o.config.loadPollIntervalMs, sample);
    };
    sample();
  }

  /**
   * The engine at `slot` accepted a request keyed `hashes`: the requests index records
   * it as the owner; an events index waits for the engine's events, and remembers the
   * send for the event gap (the relay's record, src/router/proxy/relay.ts).
   */
  recordSent(slot: number, hashes: readonly number[], hints: Int32Array): void {
    if (this.kvEvents === undefined) this.index.record(slot, hashes, hashes.length, hints);
    else this.prefix.predicted?.record(hashes, this.workers[slot]!);
  }

  /**
   * A request of `inputTokens` sent to the engine at `slot`, as the relay takes it
   * (src/router/proxy/relay.ts): its prefill is pending on the engine until its first
   * token, and a sample of the engine's rate when the engine's last fresh sample had
   * nothing waiting. `signal` is what the index said at selection, for its predicted
   * uncached tokens (the virtual runs key whole token blocks).
   */
  prefillTicket(slot: number, inputTokens: number, signal: PrefixSignal | undefined): PrefillTicket {
    const worker = this.workers[slot]!;
    const own = predictedUncachedTokens(inputTokens, signal, worker, this.o.config.blockSize);
    const basic = this.table.basic(worker);
    return new PrefillTicket(worker.prefill, own, basic?.waiting === 0, basic?.queuedTokens);
  }

  /** What each engine's estimator learnt, by engine. */
  learnedPrefill(): Array<PrefillEstimate | null> {
    return this.workers.map((w) => w.prefill.current);
  }

  /** Prompt tokens the engines were sent and how many their prefix caches held; closes the engines. */
  finish(): { promptTokens: number; cachedTokens: number } {
    let promptTokens = 0;
    let cachedTokens = 0;
    for (const e of this.engines) {
      for (const r of e.ranks) {
        promptTokens += r.counters.promptTokensTotal;
        cachedTokens += r.counters.cachedTokensTotal;
      }
      e.close();
    }
    return { promptTokens, cachedTokens };
  }
}
