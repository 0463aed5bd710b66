export { theilSen } from './theil-sen.js';
export type { Line } from './theil-sen.js';
export {
  ADMISSION_LATE_QUANTILE,
  AHEAD_MIN_SAMPLES,
  LATE_QUANTILE,
  POINT_LATE_QUANTILE,
  LATE_WINDOW_MS,
  predictTtftMs,
  PrefillEstimator,
  PREFILL_MIN_SAMPLES,
  PREFILL_MIN_SPREAD,
  PREFILL_WINDOW,
} from './prefill-estimator.js';
export type { PrefillEstimate } from './prefill-estimator.js';
export { predictedCachedTokens, predictedUncachedTokens } from './predicted-cached.js';
export type { MatchedPrefix } from './predicted-cached.js';
export { PrefillTicket } from './prefill-ticket.js';
