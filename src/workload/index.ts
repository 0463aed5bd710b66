export { Workload, DEFAULT_WORKLOAD, systemPrompt } from './workload.js';
export type { WorkloadOptions, Arrival } from './workload.js';
export { TrafficDriver } from './traffic-driver.js';
export type { DriverOptions, RequestResult } from './traffic-driver.js';
export { Zipf } from './zipf.js';
