import type { RouterConfig } from '../../config/index.js';
import { DECISIONS } from '../../contract/index.js';
import type { AdminRouter, AdminState, PrefillJson, WorkerFields } from '../../contract/index.js';
import type { KvCatchUp } from '../../engines/index.js';
import type { HistogramReading, RouterMetrics } from '../metrics/index.js';
import type { QueueGate } from '../policies/index.js';
import type { PrefillEstimator } from '../policies/prefill-rate/index.js';
import type { WorkerReading } from '../status/worker-status.js';
import type { Worker } from '../upstream/worker.js';
import { JsonBuffer } from './json-buffer.js';
import type { FieldsJson, WorkerFieldsJson } from './worker-fields-json.js';

/** What the admin document is assembled from, beyond the per-worker readings. */
export interface AdminStateInput {
  readonly config: RouterConfig;
  /** The router's queue gate: `gated` per worker, and the limit and floor it reports. */
  readonly gate: QueueGate;
  readonly metrics: RouterMetrics;
  readonly readings: readonly WorkerReading[];
  readonly version: string;
  readonly modelId: string | null;
  /** The model label the metrics are booked under (the model id, or "unknown"). */
  readonly metricsModel: string;
  readonly simulated: boolean;
  readonly startedAt: number;
  readonly url: string;
  readonly ready: boolean;
  readonly alerts: AdminState['alerts'];
  readonly prefixIndex: AdminState['prefix_index'];
  /** Tokens per block of the prefix index's keys. */
  readonly blockSize: number;
  readonly events: AdminState['events'];
  /** The document's monotonic instant (performance.now()): the readings were taken at it, or a slice at a time up to it. */
  readonly now: number;
}

/**
 * One worker's entry in parts: the fields, their JSON (two equal strings mean nothing
 * changed but the sample's age), the age, and the latency histograms' JSON, which is
 * the same string for as long as they take no observation.
 */
export interface WorkerPart {
  readonly fields: WorkerFields;
  readonly json: FieldsJson;
  readonly sampleAgeMs: number | null;
  readonly latency: LatencyJson;
}

/**
 * A worker's `latency` as JSON, and encoded; the same object while its histograms take
 * no observation. Its histograms are copied when it is made and written when first
 * read, as FieldsJson: a stream's delta writes only the workers it sends.
 */
export interface LatencyJson {
  /** Observations of `ttft_seconds` and of `duration_seconds`: two objects with the same counts hold the same histograms. */
  readonly ttftCount: number;
  readonly durationCount: number;
  readonly text: string;
  readonly bytes: Buffer;
  /** The histograms as read, for a stream delta to say what they gained. */
  readonly readings: { readonly ttft_seconds: HistogramReading; readonly duration_seconds: HistogramReading };
}

/** The /admin/state document in parts, built once and written whole (/admin/state) or as a delta (/admin/stream?delta=1). */
export interface AdminStateParts {
  readonly head: Omit<AdminState, 'workers'>;
  readonly workers: readonly WorkerPart[];
  /** Epoch ms now on the clock `sample_at_ms` is read by: `sample_age_ms` is this minus `sample_at_ms`. */
  readonly sampleClockMs: number;
}

/**
 * Each worker's `latency` as JSON, built again only when a histogram took an
 * observation: at thousands of workers, building and writing 34 buckets per worker
 * was most of the document's cost, and most workers' histograms do not move between
 * two documents. Keyed by the worker object, so a worker removed and added again under
 * the same URL (its series restarted) never reads an old entry.
 */
export class WorkerLatencyJson {
  readonly #cache = new WeakMap<Worker, LatencyJson>();
  /** Every worker without observations has the same histograms. */
  #empty: LatencyJson | undefined;

  constructor(private readonly metrics: RouterMetrics) {}

  of(worker: Worker): LatencyJson {
    const m = this.metrics;
    const labels = [worker.url];
    const ttft = m.workerTtft.count(labels);
    const duration = m.workerDuration.count(labels);
    if (ttft === 0 && duration === 0) return (this.#empty ??= this.read(labels));
    const hit = this.#cache.get(worker);
    if (hit !== undefined && hit.ttftCount === ttft && hit.durationCount === duration) return hit;
    const json = this.read(labels);
    this.#cache.set(worker, json);
    return json;
  }

  private read(labels: string[]): LatencyJson {
    return new LatencyReading(this.metrics.workerTtft.reading(labels), this.metrics.workerDuration.reading(labels));
  }
}

/** A worker's histograms copied when read, their JSON written when first asked for. */
class LatencyReading implements LatencyJson {
  #text: string | undefined;
  #bytes: Buffer | undefined;
  readonly readings: LatencyJson['readings'];

  constructor(ttft: HistogramReading, duration: HistogramReading) {
    this.readings = { ttft_seconds: ttft, duration_seconds: duration };
  }

  get ttftCount(): number {
    return this.readings.ttft_seconds.count;
  }

  get durationCount(): number {
    return this.readings.duration_seconds.count;
  }

  get text(): string {
    const r = this.readings;
    return (this.#text ??= `{"ttft_seconds":${r.ttft_seconds.json()},"duration_seconds":${r.duration_seconds.json()}}`);
  }

  get bytes(): Buffer {
    return (this.#bytes ??= Buffer.from(this.text));
  }
}

/**
 * The /admin/state document (docs/metrics-and-admin.md) in parts, typed by the
 * contract the console and bench parse, so a field the router does not write cannot
 * be read. adminStateJson writes it whole.
 */
export function adminStateParts(s: AdminStateInput, cache: AdminStateCache): AdminStateParts {
  return assembleParts(
    s,
    s.readings.map((reading) => workerPart(reading, s.gate, s.now, cache)),
  );
}

/** What the per-worker parts are built with: each worker's fields' JSON and latency JSON, kept while they stand. */
export interface AdminStateCache {
  readonly fields: WorkerFieldsJson;
  readonly latency: WorkerLatencyJson;
}

/** One worker's part of the document, read at `now` (performance.now()). */
export function workerPart(reading: WorkerReading, gate: QueueGate, now: number, cache: AdminStateCache): WorkerPart {
  const fields = workerFields(reading, gate, performance.timeOrigin + now);
  return {
    fields,
    json: cache.fields.of(reading.worker, fields),
    sampleAgeMs: reading.sampleAgeMs === undefined ? null : Math.round(reading.sampleAgeMs),
    latency: cache.latency.of(reading.worker),
  };
}

/**
 * The document from its workers' parts, which may have been read a slice at a time
 * (AdminDocuments.partsInSlices): the rest is read at `s.now`, the last instant, so no
 * sample is newer than the clock its age is counted from.
 */
export function assembleParts(s: AdminStateInput, workers: WorkerPart[]): AdminStateParts {
  const m = s.metrics;
  const decisions = Object.fromEntries(DECISIONS.map((d) => [d, m.cacheDecisions.get([s.metricsModel, d])])) as AdminState['decisions'];
  const policyDecisions: Record<string, number> = {};
  m.policyDecisions.forEach((labels, v) => (policyDecisions[labels[1]!] = v));
  let requestsTotal = 0;
  for (const w of workers) requestsTotal += w.fields.requests_total;
  return {
    head: {
      router: routerFields(s),
      decisions,
      selection_failures_total: m.selectionFailures.sum(),
      diverted_overlap_blocks: m.divertedOverlap.snapshot([s.metricsModel]),
      alerts: s.alerts,
      requests_total: requestsTotal,
      gate_rejections_total: m.gateRejected.sum(),
      partial_diversions_total: m.partialDiversions.sum(),
      policy_decisions: policyDecisions,
      prefix_index: s.prefixIndex,
      events: s.events,
      latency: { ttft_seconds: m.ttft.snapshot([s.metricsModel]), duration_seconds: m.duration.snapshot([s.metricsModel]) },
      timestamp_ms: Date.now(),
    },
    workers,
    sampleClockMs: Math.round(performance.timeOrigin + s.now),
  };
}

/** What goes between a worker's fields and its latency: its sample's age. */
function ageJson(p: WorkerPart): string {
  return `,"sample_age_ms":${p.sampleAgeMs === null ? 'null' : p.sampleAgeMs},"latency":`;
}

/** One worker's entry as JSON, from its parts. */
export function workerJson(p: WorkerPart): string {
  return `${p.json.text.slice(0, -1)}${ageJson(p)}${p.latency.text}}`;
}

/**
 * The whole document as the object a client parses from adminStateBody: for in-process
 * readers (tests, the embedded console), which need not parse back the bytes written
 * for the wire. A test holds the two equal on live documents.
 */
export function adminStateObject(p: AdminStateParts): AdminState {
  const { router, ...rest } = p.head;
  const workers = p.workers.map((w) => ({
    ...w.fields,
    sample_age_ms: w.sampleAgeMs,
    latency: { ttft_seconds: w.latency.readings.ttft_seconds.snapshot(), duration_seconds: w.latency.readings.duration_seconds.snapshot() },
  }));
  return { router, workers, ...rest };
}

/** The bytes a worker's entry takes in the whole document (adminStateBody), its comma included, without writing it. */
export function workerBytes(p: WorkerPart): number {
  return p.json.open.length + AGE_KEY.length + String(p.sampleAgeMs).length + LATENCY_KEY.length + p.latency.bytes.length + 2;
}

const AGE_KEY = Buffer.from(',"sample_age_ms":');
const LATENCY_KEY = Buffer.from(',"latency":');
const COMMA = 0x2c;
const CLOSE = 0x7d;

/** Bytes per worker of the last document written, to size the next one's buffer. */
let bytesPerWorker = 1024;

/**
 * The whole document, encoded. Written from the parts into one buffer rather than
 * stringified as one object, so that unchanged latency JSON is copied as bytes instead
 * of rebuilt for every worker, and no multi-megabyte string is assembled and encoded.
 */
export function adminStateBody(p: AdminStateParts): Buffer {
  const { router, ...rest } = p.head;
  const out = new JsonBuffer(p.workers.length * bytesPerWorker + 16_384);
  out.text(`{"router":${JSON.stringify(router)},"workers":[`);
  p.workers.forEach((w, i) => {
    if (i > 0) out.byte(COMMA);
    out.bytes(w.json.open);
    out.bytes(AGE_KEY);
    out.number(w.sampleAgeMs);
    out.bytes(LATENCY_KEY);
    out.bytes(w.latency.bytes);
    out.byte(CLOSE);
  });
  out.text(`],${JSON.stringify(rest).slice(1)}`);
  const body = out.done();
  if (p.workers.length > 0) bytesPerWorker = Math.ceil((body.length * 1.1) / p.workers.length);
  return body;
}

/**
 * The `router` object: each field of the contract's ROUTER_FIELDS as the router reads
 * it (the compiler holds this to the table). `worker_queue_limit` is the flag as given,
 * the value /admin/decisions writes too (configuredQueueLimit).
 */
function routerFields(s: AdminStateInput): AdminRouter {
  const { config, gate } = s;
  return {
    version: s.version,
    policy: config.policy,
    model_id: s.modelId,
    worker_queue_limit: configuredQueueLimit(config),
    saturation_queue_floor: gate.floor,
    min_load_choices: config.minLoadChoices,
    uptime_s: Math.round((Date.now() - s.startedAt) / 100) / 10,
    simulated: s.simulated,
    url: s.url,
    ready: s.ready,
    load_freshness_ms: config.loadFreshnessMs,
    block_size: s.blockSize,
    queue_gate_mode: gate.mode,
    queue_gate_limit: gate.limit,
    queue_gate_tokens: gate.tokenLimit,
    queue_gate_rule: gate.rule(),
    ttft_slo_ms: config.ttftSloMs,
    admission: config.admission,
  };
}

/** `worker_queue_limit` in both admin documents: --worker-queue-limit as given (the rule in force is `queue_gate_limit`). */
export function configuredQueueLimit(config: RouterConfig): number | null {
  return config.workerQueueLimit;
}

/**
 * A worker's fields but its sample's age and latency, each field of the contract's
 * WORKER_FIELDS as the router reads it (the compiler holds this to the table); `clock`
 * is epoch ms now on the monotonic clock.
 */
function workerFields(r: WorkerReading, gate: QueueGate, clock: number): WorkerFields {
  const { worker: w, fresh, sampleAgeMs, healthy, unreachable, polls, loadSource, push, kvEvents } = r;
  return {
    url: w.url,
    healthy,
    breaker: w.breaker.state,
    waiting: fresh ? fresh.waiting : null,
    running: fresh ? fresh.running : null,
    queued_tokens: fresh?.queuedTokens ?? null,
    kv_usage: fresh && fresh.maxTotalTokens > 0 ? Math.min(1, fresh.usedTokens / fresh.maxTotalTokens) : null,
    sample_at_ms: sampleAgeMs === undefined ? null : Math.round(clock - sampleAgeMs),
    fresh: fresh !== undefined,
    gated: fresh !== undefined && gate.isQueued(fresh.waiting, fresh.queuedTokens),
    inflight: w.inflight,
    requests_total: w.requestsTotal,
    gate_rejections_total: w.gateRejectionsTotal,
    prefill: prefillJson(w.prefill),
    dp_size: w.info.dpSize ?? null,
    load_poll_failures_total: polls.failuresTotal,
    load_poll_failures: { ...polls.failures },
    last_poll_error: polls.lastError
      ? { reason: polls.lastError.reason, message: polls.lastError.message, at_ms: polls.lastError.atMs }
      : null,
    load_poll_unanswered: polls.unanswered,
    load_unreachable: unreachable,
    load_source: loadSource,
    load_push: push
      ? {
          endpoints: [...push.endpoints],
          frames_total: push.frames,
          decode_errors_total: push.decodeErrors,
          missed_total: push.missed,
          resets_total: push.resets,
          last_error: push.lastError ?? null,
        }
      : null,
    kv_events: kvEvents
      ? {
          endpoints: [...kvEvents.endpoints],
          endpoints_from: w.info.pushFrom === 'config' ? 'config' : 'engine',
          keying: kvEvents.keying,
          unplaced_blocks_total: kvEvents.unplacedBlocks,
          unkeyed_blocks_total: kvEvents.unkeyedBlocks,
          batches_total: kvEvents.stats.batches,
          events_total: kvEvents.stats.events,
          skipped_events_total: kvEvents.stats.skippedEvents,
          decode_errors_total: kvEvents.stats.decodeErrors,
          gaps_total: kvEvents.stats.gaps,
          missed_total: kvEvents.stats.missed,
          repaired_total: kvEvents.stats.repaired,
          lost_total: kvEvents.stats.lost,
          resets_total: kvEvents.stats.resets,
          replayed_at_start_total: kvEvents.stats.replayedAtStart,
          replay_endpoints: [...kvEvents.replayEndpoints],
          replay_from: w.info.push?.replayFrom ?? null,
          block_size: kvEvents.blockSize,
          catch_up: kvEvents.stats.catchUp,
          catch_up_missed_batches: kvEvents.stats.catchUpMissed,
          lag_seconds: kvEvents.lagSeconds === null ? null : Math.round(kvEvents.lagSeconds * 1000) / 1000,
          note: catchUpNote(kvEvents.stats.catchUp, kvEvents.stats.catchUpMissed),
          last_error: kvEvents.stats.lastError ?? null,
        }
      : null,
  };
}

/** What an operator should know of a worker's catch-up, in one line; null when the index is whole. */
function catchUpNote(outcome: KvCatchUp, missed: number): string | null {
  if (outcome === 'partial')
    return `partial catch-up: the engine's replay buffer no longer held the first ${missed} batches; blocks stored in them are missing until the engine stores them again`;
  if (outcome === 'failed')
    return 'catch-up failed: the replay socket did not answer; what the engine held before this router subscribed is missing';
  if (outcome === 'none') {
    return missed > 0
      ? `no replay endpoint: this router subscribed after ${missed} batches and holds none of what they stored`
      : "no replay endpoint: a router replica started later begins empty (set replay_endpoint in the engine's --kv-events-config)";
  }
  return null;
}

/** A worker's learnt prefill rate, rounded as an operator reads it. */
function prefillJson(p: PrefillEstimator): PrefillJson {
  const e = p.current;
  return {
    tokens_per_second: e === null ? null : Math.round(e.tokensPerSecond),
    base_ms: e === null ? null : Math.round(e.baseMs * 100) / 100,
    ahead_ms_per_token: e === null ? null : Math.round(e.aheadMsPerToken * 1e6) / 1e6,
    samples: p.samples,
    pending_tokens: p.pending,
    token_scale: Math.round(p.scale * 1000) / 1000,
  };
}
