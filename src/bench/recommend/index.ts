// `bench compare --recommend` (docs/bench.md §Recommend): samples, the ranking, its text.
export { PICKING, SAMPLES, seedSamples, traceWindows } from './held-out-samples.js';
export type { HeldOutSample } from './held-out-samples.js';
export { recommend } from './recommendation.js';
export type { Lead, RankedConfiguration, Recommendation, SampleOutcome, Score } from './recommendation.js';
export { recommendationLines } from './recommendation-text.js';
export type { SampleSets } from './recommendation-text.js';
