// What other areas may import from src/fleet: a router fleet as the console sees it (its
// replica clients, the readers of a router's admin API and /metrics, merge, rates, the
// view model and the text helpers that present it). Bench reads a router's /metrics
// through the same page reader, so there is one reading of it. Everything else is internal.
export { FleetFeed, fetchFleetOnce } from './fleet-feed.js';
export type { FleetFeedOptions, Store } from './fleet-feed.js';
export { ReplicaClient, fetchSnapshot } from './replica-client.js';
export type { ReplicaOptions } from './replica-client.js';
export { snapshotFromAdmin } from './from-admin.js';
export { snapshotFromPrometheus } from './from-prometheus.js';
export { RouterMetricsPage, NotARouterMetricsError } from './router-metrics-page.js';
export { computeRates, histogramDelta, histogramQuantile, histogramQuantileEstimate, RATE_WINDOW_MS, RateWindow } from './rates.js';
export { mergeReplicas } from './merge.js';
export { lastAnswerAgeMs, replicaState } from './replica-state.js';
export type { ReplicaState } from './replica-state.js';
export { SseParser } from './sse.js';
export type { SseEvent } from './sse.js';
export { SORT_KEYS, nextSortKey, sortWorkers, filterWorkers, shownWorkers } from './sort-filter.js';
export type { SortKey } from './sort-filter.js';
export {
  DASH,
  bar,
  bucketCounts,
  fmtAge,
  fmtCount,
  fmtDuration,
  fmtInt,
  fmtPct,
  fmtRate,
  fmtSeconds,
  fmtTokens,
  nonEmptySpan,
  ownCounterText,
  pad,
  shortUrl,
  sourceName,
  waitingLevel,
} from './format.js';
export type { Level } from './format.js';
export { fmtQuantileSeconds } from './format-quantile.js';
export { createAgent, getText, headers, normalizeRouterUrl, unauthorized, unreachable } from './http.js';
export { DECISION_LABELS, hitRatio, emptyRouterInfo } from './view-model.js';
export type {
  SourceKind,
  SourceChoice,
  Breaker,
  DecisionLabel,
  DecisionCounts,
  Histogram,
  FleetEvent,
  LatencyQuantiles,
  QuantileEstimate,
  RouterInfo,
  OwnCounter,
  ForeignRouter,
  WorkerSnapshot,
  ReplicaSnapshot,
  ReplicaRates,
  ReplicaStatus,
  FleetWorker,
  FleetView,
} from './view-model.js';
export { ReplayFeed, readRecording } from './replay-feed.js';
export type { RecordedUpdate } from './replay-feed.js';
