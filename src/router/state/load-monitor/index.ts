export { LoadTable } from './load-table.js';
export type { RankReading, Readings } from './load-table.js';
export { DEFAULT_UNREACHABLE_AFTER, LoadSampler } from './load-sampler.js';
export type { LoadPollStats, SampleStatus, SamplerOptions } from './load-sampler.js';
export { LoadPush } from './load-push.js';
export type { LoadPushStats } from './load-push.js';
export { loadMonitor } from './load-monitor.js';
export type { LoadMonitor } from './load-monitor.js';
