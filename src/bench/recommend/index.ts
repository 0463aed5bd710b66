// `bench compare --recommend` (docs/bench.md §Recommend): samples, their outcomes, the ranking, its text.
export { PICKING, SAMPLES, seedSamples, traceWindows } from './held-out-samples.js';
export type { HeldOutSample, HeldOutSplit } from './held-out-samples.js';
export { heldOutOutcomes, sliceOutcomes } from './sample-outcomes.js';
export type { TraceReplay } from './sample-outcomes.js';
export { recommend } from './recommendation.js';
export type { Lead, RankedConfiguration, Recommendation, SampleOutcome, Score } from './recommendation.js';
export { recommendationLines } from './recommendation-text.js';
export type { SampleSets } from './recommendation-text.js';
