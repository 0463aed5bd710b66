import { ExpositionWriter, labelPairs } from '../../prometheus/index.js';
import type { Sample } from '../../prometheus/index.js';
import { POLL_FAILURE_REASONS } from '../../engines/index.js';
import type { KvCatchUp, PollFailureReason } from '../../engines/index.js';
import { CounterFamily, HistogramFamily } from './families.js';
import { DECISIONS, METRIC_NAMES } from '../../contract/index.js';

export const DIVERTED_OVERLAP_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
export const TTFT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400];
export const UNKNOWN_MODEL = 'unknown';
/** Predicted minus reported cached tokens: both signs, in powers of four (docs/decisions.md §Metrics). */
/** The endpoint picker's pick, in seconds: a tenth of a millisecond up to a tenth of a second. */
export const PICK_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
export const PREDICTION_ERROR_BUCKETS = [-16384, -4096, -1024, -256, -64, -16, -1, 0, 16, 64, 256, 1024, 4096, 16384];
export { DECISIONS } from '../../contract/index.js';

/** Per-worker gauges, read from the live registry and load table at scrape time. */
export interface WorkerGaugeSource {
  url: string;
  inflight: number;
  healthy: boolean;
  breakerState: 0 | 1 | 2;
  waiting: number | null;
  sampleAgeSeconds: number | null;
  /** Prompt tokens per second its prefill was learnt to run at; null while cold (docs/routing.md §Learned prefill rate). */
  prefillTokensPerSecond?: number | null;
  /** Failed load polls by cause (docs/engine-load.md, "Poll failures"). */
  loadPollFailures?: Readonly<Record<PollFailureReason, number>>;
}

export interface GaugeSource {
  modelId: string;
  /**
   * The policy is cache_aware: only then are the cache-aware families (decisions,
   * diverted overlap, gate rejections, admission and guard counters) exported, as
   * the reference router does, so a round_robin router shows no zero decisions
   * that read like a working gate (docs/metrics-and-admin.md).
   */
  cacheAware: boolean;
  workers: () => WorkerGaugeSource[];
  queueGateInert: () => boolean;
  prefixIndexBlocks: () => number;
  prefixIndexEvictions: () => number;
  /** Each worker's KV event feeds, when the prefix index is built from them (docs/metrics-and-admin.md §KV event feed metrics). */
  kvFeeds?: () => readonly KvFeedGaugeSource[];
  /** The endpoint picker runs (--epp): only then is its family exported. */
  epp?: boolean;
  /** Requests --admission slo holds now; exported only under it. */
  heldRequests?: () => number;
}

/** One worker's KV event feeds (summed over its DP ranks), read at scrape time. */
export interface KvFeedGaugeSource {
  url: string;
  batches: number;
  gapsRepaired: number;
  gapsLost: number;
  decodeErrors: number;
  /** Now minus the engine's timestamp on the last batch applied; null before the first. */
  lagSeconds: number | null;
  catchUp: KvCatchUp;
}

const CATCH_UP_OUTCOMES: readonly KvCatchUp[] = ['pending', 'complete', 'partial', 'failed', 'none'];

/** One worker's labels as /metrics writes them: `worker_url`, `worker`, and both (in-flight carries the two). */
interface WorkerLabelPairs {
  readonly workerUrl: string;
  readonly worker: string;
  readonly both: string;
}

/**
 * The router's metrics, with the reference router's names, labels and buckets, plus
 * the blind-spot metrics it lacked (gate rejections per worker, partial diversions,
 * gate inertness, per-worker waiting and sample age). Names come from the contract's
 * METRIC_NAMES, which the console and bench look families up by, so a family cannot be
 * renamed here without its readers following.
 */
export class RouterMetrics {
  readonly requests = new CounterFamily(METRIC_NAMES.requests, 'Requests received, by route and method.', ['route', 'method']);
  readonly responses = new CounterFamily(METRIC_NAMES.responses, 'Responses sent, by route, method and status code.', [
    'route',
    'method',
    'status_code',
  ]);
  readonly workerRequests = new CounterFamily(METRIC_NAMES.workerRequests, 'Requests dispatched to workers, by outcome.', [
    'worker_url',
    'model_id',
    'mode',
    'outcome',
  ]);
  readonly duration = new HistogramFamily(
    METRIC_NAMES.requestDuration,
    'End-to-end request duration at the router.',
    ['model_id'],
    DURATION_BUCKETS,
  );
  readonly ttft = new HistogramFamily(
    METRIC_NAMES.ttft,
    'Time to first streamed token at the router (successful streams).',
    ['model_id'],
    TTFT_BUCKETS,
  );
  /**
   * The same two per worker, for the admin state's drill-down only: not exported to
   * /metrics, whose series stay as the reference router has them.
   */
  readonly workerTtft = new HistogramFamily('', '', ['worker'], TTFT_BUCKETS);
  readonly workerDuration = new HistogramFamily('', '', ['worker'], DURATION_BUCKETS);
  readonly streamOutcomes = new CounterFamily(METRIC_NAMES.streamOutcomes, 'Streaming responses by outcome.', [
    'worker_url',
    'model_id',
    'outcome',
  ]);
  readonly policyDecisions = new CounterFamily(METRIC_NAMES.policyDecisions, 'Selections by policy and decision reason.', [
    'policy',
    'reason',
  ]);
  readonly selectionFailures = new CounterFamily(
    METRIC_NAMES.selectionFailures,
    'Selections that resolved no worker (503), by policy and reason.',
    ['policy', 'reason'],
  );
  readonly cacheDecisions = new CounterFamily(METRIC_NAMES.cacheDecisions, 'Cache-aware selections that resolved a worker, by decision.', [
    'model_id',
    'decision',
  ]);
  readonly divertedOverlap = new HistogramFamily(
    METRIC_NAMES.divertedOverlap,
    'Matched prefix blocks given up by a queue-gate diversion (deepest gated owner).',
    ['model_id'],
    DIVERTED_OVERLAP_BUCKETS,
  );
  readonly gateRejected = new CounterFamily(METRIC_NAMES.gateRejected, 'Cache candidates the worker queue gate rejected, per worker.', [
    'model_id',
    'worker',
  ]);
  readonly partialDiversions = new CounterFamily(
    METRIC_NAMES.partialDiversions,
    'Deepest prefix owner gated, a shallower owner won (booked cache_hit).',
    ['model_id'],
  );
  readonly admissionEvaluated = new CounterFamily(
    METRIC_NAMES.admissionEvaluated,
    'Cache candidates evaluated by hard (capacity) admission.',
    [],
  );
  readonly admissionRejected = new CounterFamily(
    METRIC_NAMES.admissionRejected,
    'Cache candidates hard admission rejected (gate rejections excluded).',
    [],
  );
  readonly guardCompared = new CounterFamily(METRIC_NAMES.guardCompared, 'Candidate pairs the pressure guard compared.', []);
  readonly guardOverrides = new CounterFamily(METRIC_NAMES.guardOverrides, 'Comparisons the pressure guard overrode.', []);
  readonly monitorDecisions = new CounterFamily(METRIC_NAMES.monitorDecisions, 'Cache resolutions by the pressure data they compared on.', [
    'source',
  ]);
  readonly predictionError = new HistogramFamily(
    METRIC_NAMES.predictionError,
    'Prefix tokens the router predicted the selected worker holds, minus the cached tokens the engine then reported.',
    ['model_id'],
    PREDICTION_ERROR_BUCKETS,
  );
  readonly decisionMatchedBlocks = new HistogramFamily(
    METRIC_NAMES.decisionMatchedBlocks,
    'Prefix blocks matched per routed request: on the selected worker, and on the best owner.',
    ['model_id', 'which'],
    [0, ...DIVERTED_OVERLAP_BUCKETS],
  );
  readonly retries = new CounterFamily(METRIC_NAMES.retries, 'Requests retried on another worker before any byte reached the client.', [
    'reason',
  ]);
  readonly shed = new CounterFamily(
    METRIC_NAMES.shedRequests,
    'Requests refused with 429 before they were booked, by reason (saturated: the request may be shed and every worker is queued; slo: under --admission slo no worker is predicted to start it within --ttft-slo-ms).',
    ['reason'],
  );
  readonly eppPick = new HistogramFamily(
    METRIC_NAMES.eppPickDuration,
    "Seconds from the end of a request's body on the ext_proc stream to the endpoint picker's answer naming its engine.",
    [],
    PICK_BUCKETS,
  );
  readonly unkeyedRequests = new CounterFamily(
    METRIC_NAMES.prefixUnkeyedRequests,
    'Requests routed without prefix affinity because they could not be keyed as the prefix index is keyed, by reason (no_tokenizer, unsupported_input).',
    ['reason'],
  );

  constructor(private readonly gauges: GaugeSource) {
    // Without --model-id the model is known after discovery, which calls setModelId.
    if (gauges.modelId !== UNKNOWN_MODEL) this.setModelId(gauges.modelId);
    for (const reason of ['no_tokenizer', 'unsupported_input']) this.unkeyedRequests.touch([reason]);
    this.shed.touch(['saturated']);
    this.shed.touch(['slo']);
  }

  /** Each live worker's label pairs, rendered once: per-worker gauges are written for every worker at every scrape. */
  readonly #workerLabels = new Map<string, WorkerLabelPairs>();

  private labelsOf(url: string): WorkerLabelPairs {
    let p = this.#workerLabels.get(url);
    if (p === undefined) {
      p = {
        workerUrl: labelPairs({ worker_url: url }),
        worker: labelPairs({ worker: url }),
        both: labelPairs({ worker: url, worker_url: url }),
      };
      this.#workerLabels.set(url, p);
    }
    return p;
  }

  /** Moves whenever a worker's series are dropped: WorkerBookings then finds its series again. */
  workerEpoch = 0;

  /** A worker left the fleet: its own series go with it (gauges are read from the live workers). */
  forgetWorker(url: string): void {
    this.workerEpoch++;
    this.#workerLabels.delete(url);
    this.workerTtft.forget('worker', url);
    this.workerDuration.forget('worker', url);
    this.streamOutcomes.forget('worker_url', url);
    this.workerRequests.forget('worker_url', url);
    this.gateRejected.forget('worker', url);
  }

  /** The served model is known only after discovery; pre-create its series so dashboards see zeros. */
  setModelId(modelId: string): void {
    this.gauges.modelId = modelId;
    if (!this.gauges.cacheAware) return;
    for (const d of DECISIONS) this.cacheDecisions.touch([modelId, d]);
    this.divertedOverlap.touch([modelId]);
    this.partialDiversions.touch([modelId]);
  }

  render(): string {
    const m = this.gauges.modelId;
    const workers = this.gauges.workers();
    const pairs = (x: WorkerGaugeSource): WorkerLabelPairs => this.labelsOf(x.url);
    const w = new ExpositionWriter();
    w.counter(this.requests.name, this.requests.help, this.requests.samples())
      .counter(this.responses.name, this.responses.help, this.responses.samples())
      .counter(this.workerRequests.name, this.workerRequests.help, this.workerRequests.samples())
      .histogram(this.duration.name, this.duration.help, this.duration.samples())
      .histogram(this.ttft.name, this.ttft.help, this.ttft.samples())
      .counter(this.streamOutcomes.name, this.streamOutcomes.help, this.streamOutcomes.samples())
      .gauge(METRIC_NAMES.workers, 'Registered workers by mode.', [
        { labels: { mode: 'decode' }, value: 0 },
        { labels: { mode: 'plain' }, value: workers.length },
        { labels: { mode: 'prefill' }, value: 0 },
      ])
      .gaugeEach(
        METRIC_NAMES.workerHealth,
        '1 if the worker is in the pool: its circuit breaker would admit a request and its load polls get answers.',
        workers,
        (x) => pairs(x).workerUrl,
        (x) => (x.healthy ? 1 : 0),
      )
      .gaugeEach(
        METRIC_NAMES.workerBreakerState,
        'Circuit breaker state: 0 closed, 1 open, 2 half open.',
        workers,
        (x) => pairs(x).workerUrl,
        (x) => x.breakerState,
      )
      .gaugeEach(
        METRIC_NAMES.workerInflight,
        'Router-local in-flight requests per worker.',
        // `worker` is routerctl's label, `worker_url` the Rust router's. Both, so either query works (docs/metrics-and-admin.md §Differences from the reference router).
        workers,
        (x) => pairs(x).both,
        (x) => x.inflight,
      )
      .gaugeEach(
        METRIC_NAMES.workerWaiting,
        'Engine-reported waiting requests (sum over DP ranks); absent when unknown.',
        workers,
        (x) => pairs(x).worker,
        (x) => x.waiting,
      )
      .gaugeEach(
        METRIC_NAMES.workerSampleAge,
        "Age of the worker's load sample; absent when it has none.",
        workers,
        (x) => pairs(x).worker,
        (x) => x.sampleAgeSeconds,
      )
      .gaugeEach(
        METRIC_NAMES.workerPrefillRate,
        'Prompt tokens per second the worker prefills, as learnt from the TTFTs of the requests it served; absent while cold.',
        workers,
        (x) => pairs(x).worker,
        (x) => x.prefillTokensPerSecond ?? null,
      )
      .counter(
        METRIC_NAMES.loadPollFailures,
        'Load polls that produced no sample, per worker and cause (timeout, connect, http_status, unreadable, too_large).',
        pollFailureSamples(workers),
      )
      .counter(this.policyDecisions.name, this.policyDecisions.help, this.policyDecisions.samples())
      .counter(this.selectionFailures.name, this.selectionFailures.help, this.selectionFailures.samples());
    if (this.gauges.cacheAware) this.renderCacheAware(w, m);
    w.counter(this.retries.name, this.retries.help, this.retries.samples())
      .gauge(METRIC_NAMES.prefixIndexBlocks, 'Blocks held by the prefix index.', [{ value: this.gauges.prefixIndexBlocks() }])
      .counter(METRIC_NAMES.prefixIndexEvictions, 'Blocks evicted from the prefix index to stay within its cap.', [
        { value: this.gauges.prefixIndexEvictions() },
      ])
      .counter(this.unkeyedRequests.name, this.unkeyedRequests.help, this.unkeyedRequests.samples())
      .counter(this.shed.name, this.shed.help, this.shed.samples());
    const held = this.gauges.heldRequests;
    if (held !== undefined)
      w.gauge(
        METRIC_NAMES.heldRequests,
        'Requests --admission slo holds in the router until an engine is predicted to start them in time.',
        [{ value: held() }],
      );
    if (this.gauges.epp === true) w.histogram(this.eppPick.name, this.eppPick.help, this.eppPick.samples());
    this.renderKvFeeds(w);
    return w.toString();
  }

  /** The KV event feeds, per worker; no series while the index is built from requests. */
  private renderKvFeeds(w: ExpositionWriter): void {
    const feeds = [...(this.gauges.kvFeeds?.() ?? [])].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
    const per = (f: (x: KvFeedGaugeSource) => number | null): Sample[] =>
      feeds.flatMap((x) => {
        const v = f(x);
        return v === null ? [] : [{ labels: { worker: x.url }, value: v }];
      });
    w.counter(
      METRIC_NAMES.kvEventBatches,
      'KV event batches applied to the prefix index, per worker (all DP ranks).',
      per((x) => x.batches),
    )
      .counter(
        METRIC_NAMES.kvEventGaps,
        "Sequence gaps in a worker's KV events, by outcome: repaired from the replay socket, or lost.",
        feeds.flatMap((x) => [
          { labels: { worker: x.url, outcome: 'repaired' }, value: x.gapsRepaired },
          { labels: { worker: x.url, outcome: 'lost' }, value: x.gapsLost },
        ]),
      )
      .counter(
        METRIC_NAMES.kvEventDecodeErrors,
        'KV event messages that could not be decoded, per worker.',
        per((x) => x.decodeErrors),
      )
      .gauge(
        METRIC_NAMES.kvEventLag,
        'Seconds since the engine stamped the last KV event batch applied (grows while the engine is idle).',
        per((x) => x.lagSeconds),
      )
      .gauge(
        METRIC_NAMES.kvEventCatchUp,
        "How the worker's KV event feed caught up at subscription: 1 for the current outcome (pending, complete, partial, failed, none).",
        feeds.flatMap((x) => CATCH_UP_OUTCOMES.map((o) => ({ labels: { worker: x.url, outcome: o }, value: x.catchUp === o ? 1 : 0 }))),
      );
  }

  private renderCacheAware(w: ExpositionWriter, m: string): void {
    w.counter(this.cacheDecisions.name, this.cacheDecisions.help, this.cacheDecisions.samples())
      .histogram(this.divertedOverlap.name, this.divertedOverlap.help, this.divertedOverlap.samples())
      .histogram(this.predictionError.name, this.predictionError.help, this.predictionError.samples())
      .histogram(this.decisionMatchedBlocks.name, this.decisionMatchedBlocks.help, this.decisionMatchedBlocks.samples())
      .counter(this.gateRejected.name, this.gateRejected.help, this.gateRejected.samples())
      .counter(this.partialDiversions.name, this.partialDiversions.help, this.partialDiversions.samples())
      .gauge(METRIC_NAMES.queueGateInert, '1 while --worker-queue-limit is set and no worker has a fresh load sample.', [
        { labels: { model_id: m }, value: this.gauges.queueGateInert() ? 1 : 0 },
      ])
      .counter(this.admissionEvaluated.name, this.admissionEvaluated.help, this.admissionEvaluated.samples())
      .counter(this.admissionRejected.name, this.admissionRejected.help, this.admissionRejected.samples())
      .counter(this.guardCompared.name, this.guardCompared.help, this.guardCompared.samples())
      .counter(this.guardOverrides.name, this.guardOverrides.help, this.guardOverrides.samples())
      .counter(this.monitorDecisions.name, this.monitorDecisions.help, this.monitorDecisions.samples());
  }
}

/** Series appear at a worker's first failure of a cause; sorted by (worker, reason). */
function pollFailureSamples(workers: readonly WorkerGaugeSource[]): Sample[] {
  const out: Sample[] = [];
  // Only workers with a failed poll have series: sorting the whole fleet by URL at every scrape cost more than the family.
  const failed = workers.filter((w) => w.loadPollFailures !== undefined && POLL_FAILURE_REASONS.some((r) => w.loadPollFailures![r] > 0));
  const sorted = failed.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  for (const w of sorted) {
    for (const reason of POLL_FAILURE_REASONS) {
      const n = w.loadPollFailures![reason];
      if (n > 0) out.push({ labels: { worker: w.url, reason }, value: n });
    }
  }
  return out;
}

/** The reference router's outcome classes for a worker response. */
export function outcomeFromStatus(status: number): 'success' | 'client_error' | 'backpressure' | 'error' {
  if (status === 429 || status === 503) return 'backpressure';
  if (status >= 500) return 'error';
  if (status >= 400) return 'client_error';
  return 'success';
}
