import type { RouterMetrics } from '../../metrics/index.js';
import type { LoadView, PolicyWorker, PrefixSignal, QueueGate, SelectionSuccess } from '../../policies/index.js';
import { POINT_LATE_QUANTILE, predictedCachedTokens } from '../../policies/prefill-rate/index.js';
import { predictedTtftMs } from '../../policies/index.js';
import { UsageCountScanner } from './usage-count-scanner.js';
import { ownerSummary } from './decision-ring.js';
import type { DecisionRing, OwnerVerdict } from './decision-ring.js';
import type { RequestIds } from './request-ids.js';

/** One request's trace through the relay: headers to add, bytes to watch, its end. */
export interface RequestTrace {
  /** Response headers the router adds (x-request-id, x-router-decision). */
  readonly headers: Readonly<Record<string, string>>;
  /** Sees every response byte (the engine's cached tokens are read from them); undefined when nothing is recorded. */
  readonly onChunk: ((chunk: Buffer) => void) | undefined;
  /** The selected worker failed before any byte reached the client; the request went on to `to`. */
  retried(to: PolicyWorker): void;
  /** The response ended (relayed whole or cut): its status and when its first byte came. */
  done(status: number, firstByteAt: number | undefined): void;
}

export interface DecisionRecorderOptions {
  ring: DecisionRing;
  ids: RequestIds;
  metrics: RouterMetrics;
  model: () => string;
  policy: string;
  /** The router's queue gate: each owner's verdict in the record is its. */
  gate: QueueGate;
  header: 'off' | 'on' | 'urls';
  /** Tokens per block when requests are keyed by engine tokens (events index): matched blocks are whole token blocks; null otherwise. */
  tokenBlockSize: () => number | null;
}

/**
 * Turns a booked selection into a decision record (docs/decisions.md §Decision record)
 * and its response headers, and completes the record when the response ends. Off the
 * hot path when nothing is asked: with a ring of 0 and no header it returns undefined
 * and the request pays one branch.
 */
export class DecisionRecorder {
  constructor(private readonly o: DecisionRecorderOptions) {}

  get active(): boolean {
    return this.o.ring.capacity > 0 || this.o.header !== 'off';
  }

  begin(
    /** The client's x-request-id, kept when it is a usable id (request-ids.ts). */
    clientId: string | string[] | undefined,
    selection: SelectionSuccess,
    prefix: PrefixSignal | undefined,
    load: LoadView,
    inputTokens: number,
    startedAt: number,
  ): RequestTrace | undefined {
    if (!this.active) return undefined;
    const o = this.o;
    const id = o.ids.next(clientId);
    const matches = prefix?.matches ?? [];
    const queryBlocks = prefix?.queryBlocks ?? 0;
    const gate = o.gate;
    const cacheAware = selection.cacheAware;
    const rejected = cacheAware?.gateRejected;
    const blockSize = o.tokenBlockSize();
    const verdict = (w: PolicyWorker, blocks: number): OwnerVerdict => {
      const b = load.basic(w);
      // The owner's own prediction: this request less what it holds.
      const own = inputTokens - predictedCachedTokens(inputTokens, blocks, queryBlocks, blockSize);
      // The point prediction (the median lateness); the slo gate decided on the lower quartile, so an owner it left is shown over the goal too.
      const predictedMs = predictedTtftMs(w, own, load, POINT_LATE_QUANTILE) ?? -1;
      // Under slo the verdict is the selection's own, made for this request; the others are a standing rule.
      if (gate.sloMs !== null)
        return { waiting: b?.waiting ?? -1, verdict: rejected?.includes(w) === true ? 'gated' : 'admitted', predictedMs };
      if (!b) return { waiting: -1, verdict: 'unknown', predictedMs };
      return { waiting: b.waiting, verdict: gate.isQueued(b.waiting, b.queuedTokens) ? 'gated' : 'admitted', predictedMs };
    };
    const owners = ownerSummary(matches, selection.worker.id);
    // What the router expects the engine to reuse, and so to compute.
    const predicted = predictedCachedTokens(inputTokens, owners.selectedBlocks, queryBlocks, blockSize);
    // Fields spelled out: an object literal that opens with a spread and adds more than a
    // dozen properties costs V8 ~19 µs per request on Node 20 (BENCHMARKS.md, section 2),
    // against ~0.2 µs for the same literal written out.
    const seq = o.ring.record(
      {
        selectedBlocks: owners.selectedBlocks,
        best: owners.best,
        bestBlocks: owners.bestBlocks,
        id,
        atMs: Date.now(),
        policy: o.policy,
        decision: cacheAware?.decision ?? null,
        reason: selection.reason,
        inputTokens,
        queryBlocks,
        selected: selection.worker.id,
        gateRejected: cacheAware?.gateRejected?.length ?? 0,
        admissionRejected: cacheAware?.resolution?.admissionRejected ?? 0,
        fleetAllQueued: cacheAware?.resolution?.fleetAllQueued ?? false,
        divertedBlocks: cacheAware?.divertedOverlapBlocks ?? 0,
        partialDiversion: cacheAware?.partialDiversion === true,
        gateRule: gate.rule(),
        predictedTtftMs: predictedTtftMs(selection.worker, inputTokens - predicted, load, POINT_LATE_QUANTILE) ?? -1,
      },
      matches,
      verdict,
    );
    const { selectedBlocks, bestBlocks } = owners;
    const best = owners.best === null ? undefined : matches.find((m) => m.worker.id === owners.best)?.worker;
    const model = o.model();
    if (queryBlocks > 0) {
      o.metrics.decisionMatchedBlocks.observe([model, 'selected'], selectedBlocks);
      o.metrics.decisionMatchedBlocks.observe([model, 'best'], bestBlocks);
    }

    const headers: Record<string, string> = { 'x-request-id': id };
    if (o.header !== 'off') {
      const name = (w: PolicyWorker | undefined): string => (w === undefined ? '-' : o.header === 'urls' ? w.id : `w${w.slot}`);
      headers['x-router-decision'] =
        `${cacheAware?.decision ?? selection.reason}; worker=${name(selection.worker)}; matched=${selectedBlocks}/${queryBlocks}; best=${name(best)}; best_matched=${bestBlocks}/${queryBlocks}`;
    }
    const scanner = o.ring.capacity > 0 ? new UsageCountScanner() : undefined;
    return {
      headers,
      onChunk: scanner ? (c) => scanner.push(c) : undefined,
      retried: (to) => o.ring.retried(seq, to.id),
      done: (status, firstByteAt) => {
        const now = performance.now();
        const cached = scanner?.value ?? -1;
        o.ring.complete(seq, status, cached, firstByteAt === undefined ? -1 : firstByteAt - startedAt, now - startedAt);
        if (cached >= 0 && queryBlocks > 0 && status === 200) o.metrics.predictionError.observe([model], predicted - cached);
      },
    };
  }
}
