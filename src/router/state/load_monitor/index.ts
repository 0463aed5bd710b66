export { LoadTable } from './load-table.js';
export type { RankReading } from './load-table.js';
export { LoadSampler } from './load-sampler.js';
export type { SampleStatus, SamplerOptions } from './load-sampler.js';
export { parseV1Loads, parseGetLoad, parseEngineMetrics } from './load-formats.js';
export type { LoadSource, Readings } from './load-formats.js';
