export { Workload, DEFAULT_WORKLOAD, meanArrivalRate } from './workload.js';
export type { WorkloadOptions, Arrival } from './workload.js';
export { systemPrompt } from './system-prompt.js';
export { TrafficDriver } from './traffic-driver.js';
export type { DriverOptions, DriverCounts, RequestResult } from './traffic-driver.js';
export { chatExchange } from './chat-exchange.js';
export type { ExchangeOutcome, Message } from './chat-exchange.js';
export { ArrivalDigest } from './arrival-digest.js';
export { Zipf } from './zipf.js';
