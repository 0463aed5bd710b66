export { RouterMetrics, outcomeFromStatus, DECISIONS, DIVERTED_OVERLAP_BUCKETS, UNKNOWN_MODEL } from './router-metrics.js';
export type { GaugeSource, WorkerGaugeSource } from './router-metrics.js';
export type { HistogramReading } from './families.js';
export { WorkerBookings } from './worker-bookings.js';
export type { RequestOutcome, StreamOutcome } from './worker-bookings.js';
