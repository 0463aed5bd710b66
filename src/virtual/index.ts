export { VirtualFleet } from './virtual-fleet.js';
export { runVirtual, VIRTUAL_DECISIONS } from './virtual-run.js';
export type { DecisionWindow, VirtualRunOptions, VirtualRunResult } from './virtual-run.js';
export { emptyTraceResult, runTraceVirtual } from './virtual-trace-run.js';
export type { TraceRunOptions, TraceRunResult } from './virtual-trace-run.js';
export { countRefusal, emptyRefusalCounts } from './refusal-counts.js';
export type { RefusalCounts } from './refusal-counts.js';
export { DEFAULT_KV_EVENT_DELAY_MS, VirtualKvEvents } from './virtual-kv-events.js';
