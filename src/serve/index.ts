// What other areas may import from src/serve: the router run in this process (with
// --no-tui or off a terminal) and the console that runs it in a child.
export { startRouter, serveUntilStopped } from './run-router.js';
export type { RunningRouter } from './run-router.js';
export { runServeConsole } from './serve-console.js';
export { exitReport } from './exit-report.js';
