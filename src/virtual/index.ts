export { runVirtual, VIRTUAL_DECISIONS } from './virtual-run.js';
export type { DecisionWindow, VirtualRunOptions, VirtualRunResult } from './virtual-run.js';
