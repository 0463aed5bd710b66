import type { RouterConfig } from '../../config/index.js';
import type { AdminDecisions, AdminState } from '../../contract/index.js';
import type { RouterMetrics } from '../metrics/index.js';
import type { QueueGate } from '../policies/index.js';
import type { DecisionFilter, DecisionRing } from '../state/decisions/index.js';
import type { PrefixIndex } from '../state/prefix-index/index.js';
import type { PrefixState } from '../prefix-source/prefix-state.js';
import type { FleetWatch } from '../status/fleet-watch.js';
import type { WorkerReading } from '../status/worker-status.js';
import type { AdminStateCache, AdminStateInput, AdminStateParts, WorkerPart } from './admin-state.js';
import {
  WorkerLatencyJson,
  adminStateBody,
  adminStateObject,
  adminStateParts,
  assembleParts,
  configuredQueueLimit,
  workerPart,
} from './admin-state.js';
import { WorkerFieldsJson } from './worker-fields-json.js';
import type { ServedModel } from '../workers/served-model.js';

/**
 * Workers read between two turns of the event loop when the stream reads the fleet: some
 * 1-2 ms of work at 4,096 workers under traffic.
 */
const SLICE_WORKERS = 256;

/** The router's parts the documents read (the Router holds them all). */
export interface DocumentParts {
  readonly config: RouterConfig;
  readonly gate: QueueGate;
  readonly metrics: RouterMetrics;
  readonly index: PrefixIndex;
  readonly decisions: DecisionRing;
  /** The model this router serves. */
  readonly served: ServedModel;
}

export interface DocumentSources {
  readonly watch: FleetWatch;
  readonly prefix: PrefixState;
  readonly version: string;
  readonly simulated: boolean;
  readonly startedAt: number;
  /** The router's URL; '' before it listens. */
  readonly url: () => string;
  readonly ready: () => boolean;
}

/** The admin documents: GET /admin/state (docs/metrics-and-admin.md) and GET /admin/decisions (docs/decisions.md §Admin decisions). */
export class AdminDocuments {
  private readonly cache: AdminStateCache;

  constructor(
    private readonly p: DocumentParts,
    private readonly d: DocumentSources,
  ) {
    this.cache = { fields: new WorkerFieldsJson(), latency: new WorkerLatencyJson(p.metrics) };
  }

  /** /admin/state, as the object a client would parse (in-process readers and tests). */
  state(): AdminState {
    return adminStateObject(this.parts());
  }

  /** /admin/state as it is sent. */
  stateBody(): Buffer {
    return adminStateBody(this.parts());
  }

  /** /admin/state in parts; reading it is also a look for events, so the document's events are current. */
  parts(): AdminStateParts {
    const now = performance.now();
    const readings = this.d.watch.readings(now);
    this.d.watch.look(now, readings);
    return adminStateParts(this.input(readings, now), this.cache);
  }

  /**
   * The same parts, read SLICE_WORKERS workers at a time with the event loop let go
   * between slices, for the stream: at 4,096 workers under traffic reading them whole
   * held the loop some 20 ms each second an /admin/stream client was attached, and the
   * requests behind it waited that long (docs/metrics-and-admin.md §Building the document at scale).
   * Each slice is read at its own instant; the rest of the document at the last one.
   */
  async partsInSlices(): Promise<AdminStateParts> {
    const { watch } = this.d;
    const workers = watch.workers();
    const readings: WorkerReading[] = [];
    const parts: WorkerPart[] = [];
    for (let from = 0; from < workers.length; from += SLICE_WORKERS) {
      if (from > 0) await new Promise<void>((r) => setImmediate(r));
      const now = performance.now();
      for (const r of watch.readingsOf(workers, from, from + SLICE_WORKERS, now)) {
        readings.push(r);
        parts.push(workerPart(r, this.p.gate, now, this.cache));
      }
    }
    const now = performance.now();
    watch.look(now, readings);
    return assembleParts(this.input(readings, now), parts);
  }

  private input(readings: readonly WorkerReading[], now: number): AdminStateInput {
    const { p, d } = this;
    return {
      config: p.config,
      gate: p.gate,
      metrics: p.metrics,
      readings,
      version: d.version,
      modelId: p.served.id,
      metricsModel: p.served.label,
      simulated: d.simulated,
      startedAt: d.startedAt,
      url: d.url(),
      ready: d.ready(),
      alerts: d.watch.alerts(now),
      prefixIndex: this.prefixIndexSummary(),
      blockSize: d.prefix.keyBlockSize,
      events: d.watch.recentEvents(),
      now,
    };
  }

  decisions(filter: DecisionFilter = {}): AdminDecisions {
    const ring = this.p.decisions;
    return {
      worker_queue_limit: configuredQueueLimit(this.p.config),
      block_size: this.d.prefix.keyBlockSize,
      queue_gate_mode: this.p.gate.mode,
      ttft_slo_ms: this.p.config.ttftSloMs,
      capacity: ring.capacity,
      recorded_total: ring.total,
      memory_bytes: ring.memoryBytes,
      decisions: ring.query(filter),
    };
  }

  /** The prefix index's size and digest (PrefixIndex.digest, kept as pairs come and go). */
  private prefixIndexSummary(): AdminState['prefix_index'] {
    const d = this.p.index.digest();
    const { source, keying } = this.d.prefix;
    const unkeyed = this.p.metrics.unkeyedRequests;
    return {
      source,
      keyed_by: keying.by === 'tokens' ? (keying.tokenizer === null ? 'token_ids' : 'tokens') : 'text',
      blocks: d.blocks,
      owner_pairs: d.pairs,
      digest: d.digest,
      unkeyed_requests: { no_tokenizer: unkeyed.get(['no_tokenizer']), unsupported_input: unkeyed.get(['unsupported_input']) },
    };
  }
}
