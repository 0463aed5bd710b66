import type { RouterConfig } from '../../config/index.js';
import { DECISIONS } from '../../contract/index.js';
import type { AdminState, AdminWorker } from '../../contract/index.js';
import type { KvCatchUp } from '../../engines/index.js';
import type { RouterMetrics } from '../metrics/index.js';
import type { QueueGate } from '../policies/index.js';
import type { WorkerReading } from '../status/worker-status.js';

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
}

/**
 * The /admin/state document (docs/metrics-and-admin.md), typed by the contract the
 * console and bench parse, so a field the router does not write cannot be read.
 */
export function adminState(s: AdminStateInput): AdminState {
  const gate = s.gate;
  const workers: AdminWorker[] = s.readings.map(
    ({ worker: w, fresh, sampleAgeMs, healthy, unreachable, polls, loadSource, push, kvEvents }) => ({
      url: w.url,
      healthy,
      breaker: w.breaker.state,
      waiting: fresh ? fresh.waiting : null,
      running: fresh ? fresh.running : null,
      kv_usage: fresh && fresh.maxTotalTokens > 0 ? Math.min(1, fresh.usedTokens / fresh.maxTotalTokens) : null,
      sample_age_ms: sampleAgeMs === undefined ? null : Math.round(sampleAgeMs),
      fresh: fresh !== undefined,
      gated: fresh !== undefined && gate.isQueued(fresh.waiting, fresh.waitingUncachedTokens),
      inflight: w.inflight,
      requests_total: w.requestsTotal,
      gate_rejections_total: w.gateRejectionsTotal,
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
      latency: { ttft_seconds: s.metrics.workerTtft.snapshot([w.url]), duration_seconds: s.metrics.workerDuration.snapshot([w.url]) },
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
    }),
  );
  const m = s.metrics;
  const decisions = Object.fromEntries(DECISIONS.map((d) => [d, m.cacheDecisions.get([s.metricsModel, d])])) as AdminState['decisions'];
  const policyDecisions: Record<string, number> = {};
  m.policyDecisions.forEach((labels, v) => (policyDecisions[labels[1]!] = v));
  return {
    router: {
      version: s.version,
      policy: s.config.policy,
      model_id: s.modelId,
      worker_queue_limit: s.config.workerQueueLimit,
      saturation_queue_floor: gate.floor,
      min_load_choices: s.config.minLoadChoices,
      uptime_s: Math.round((Date.now() - s.startedAt) / 100) / 10,
      simulated: s.simulated,
      url: s.url,
      ready: s.ready,
      load_freshness_ms: s.config.loadFreshnessMs,
      block_size: s.blockSize,
      queue_gate_mode: gate.mode,
      queue_gate_limit: gate.limit,
      queue_gate_tokens: gate.tokenLimit,
      queue_gate_rule: gate.rule(),
    },
    workers,
    decisions,
    selection_failures_total: m.selectionFailures.sum(),
    diverted_overlap_blocks: m.divertedOverlap.snapshot([s.metricsModel]),
    alerts: s.alerts,
    requests_total: s.readings.reduce((a, r) => a + r.worker.requestsTotal, 0),
    gate_rejections_total: m.gateRejected.sum(),
    partial_diversions_total: m.partialDiversions.sum(),
    policy_decisions: policyDecisions,
    prefix_index: s.prefixIndex,
    events: s.events,
    latency: { ttft_seconds: m.ttft.snapshot([s.metricsModel]), duration_seconds: m.duration.snapshot([s.metricsModel]) },
    timestamp_ms: Date.now(),
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
