// What the sim and bench option tables show as defaults and choices, light enough for
// every command's `--help`: the engine parameters alone, none of the simulator (its
// servers, clocks, ZeroMQ publisher). The rest of the area is in ../index.ts.
export { DEFAULT_ENGINE_PARAMS, SCHEDULE_POLICIES, SGLANG_SCHEDULER_DEFAULTS, VLLM_SCHEDULER_DEFAULTS } from '../engine-params.js';
export type { EngineParams, SchedulePolicy } from '../engine-params.js';
