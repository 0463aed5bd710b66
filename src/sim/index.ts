export { startSimFleet, DEFAULT_SIM_MODEL } from './fleet.js';
export type { SimFleet, SimFleetOptions } from './fleet.js';
export { EngineServer } from './engine-server.js';
export { SimEngine } from './sim-engine.js';
export type { SimControls } from './sim-engine.js';
export { EngineCore } from './engine-core.js';
export type { EngineLoad, EngineCounters, SubmitResult } from './engine-core.js';
export {
  DEFAULT_ENGINE_PARAMS,
  SCHEDULE_POLICIES,
  SGLANG_SCHEDULER_DEFAULTS,
  VLLM_SCHEDULER_DEFAULTS,
  invalidEngineParams,
} from './engine-params.js';
export type { EngineParams, SchedulePolicy } from './engine-params.js';
export { checkLength, lengthRefusalReason } from './length-check.js';
export type { LengthRefusal, LengthRefusalReason } from './length-check.js';
export { ManualClock, RealClock } from './clock.js';
export type { Clock } from './clock.js';
export type { Flavor } from './http/responses.js';
export type { KeyedSubmitInput, SimRequest } from './sim-request.js';
export { tokenPrompt } from './keyed-prompt.js';
export type { KeyedPrompt } from './keyed-prompt.js';
export { Rng } from './rng.js';
export { coreKeys } from './routes/load-routes.js';
export { SimPushPublisher } from './push-publisher.js';
export type { PushOptions } from './push-publisher.js';
export { STAND_IN_TOKENIZER } from './sim-tokenizer.js';
export type { SimTokenizer } from './sim-tokenizer.js';
export { DEFAULT_REPLAY_BUFFER } from './push-publisher.js';
