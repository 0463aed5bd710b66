export { startEmbeddedFleet, runEmbeddedFleetChild } from './embedded-fleet.js';
export type { EmbeddedFleet } from './embedded-fleet.js';
export { autoRate, EMBEDDED_ENGINE, EMBEDDED_WORKLOAD } from './embedded-defaults.js';
export { default as embeddedFleetCommand } from './embedded-fleet-command.js';
