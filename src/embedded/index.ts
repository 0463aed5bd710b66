export { startEmbeddedFleet, runEmbeddedFleetChild } from './embedded-fleet.js';
export type { EmbeddedFleet } from './embedded-fleet.js';
export { autoRate, EMBEDDED_ENGINE, EMBEDDED_WORKLOAD, EMBEDDED_WORKLOAD_SUMMARY } from './embedded-defaults.js';
