// What other areas may import from src/top: the `routerctl top` runner and its two
// one-shot renderings of a fleet view (text for --once, the JSON document for --json).
export { runTop } from './run-top.js';
export type { TopOptions } from './run-top.js';
export { formatOnce } from './format-once.js';
export type { OnceOptions } from './format-once.js';
export { fleetJson } from './to-json.js';
