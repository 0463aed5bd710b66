export { theilSen } from './theil-sen.js';
export type { Line } from './theil-sen.js';
export {
  AHEAD_MIN_SAMPLES,
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
