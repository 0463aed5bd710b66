// What other areas may import from src/bench: the bench command's argument parser and
// runner, and the fleet launcher the soak benchmark shares with it.
export { parseBenchArgs } from './parse-args.js';
export type { BenchArgv } from './parse-args.js';
export { runBench } from './bench-main.js';
export type { BenchOptions } from './bench-main.js';
export { startRouterProcess, startSimProcess } from './fleet-processes.js';
export { runTraceBench } from './trace-bench.js';
export type { TraceArmReport, TraceBenchOptions } from './trace-bench.js';
export { parseDuration } from './duration.js';
// bench's nearest-rank percentiles, which the AIPerf benchmark ranks AIPerf's own records by.
export { percentiles } from './percentiles.js';
export { runCapture } from './capture.js';
export { runPresetCommand } from './preset/run-preset-command.js';
export { PRESET_NAMES } from './preset/preset-names.js';
export { PRESETS } from './preset/b2b-saas.js';
export type { Preset, PresetArm } from './preset/b2b-saas.js';
export { runPreset } from './preset/preset-run.js';
export type { PresetResult, PresetArmResult } from './preset/preset-run.js';
export {
  freePort,
  PEER_ROUTER_NAMES,
  isPeerRouterName,
  peerRouterMissing,
  peerRouterProgram,
  peerRouterVersion,
  peersTierPath,
  startPeerRouter,
} from './peer-routers.js';
export type { PeerRouterName, PeerRouterOptions, RunningPeerRouter } from './peer-routers.js';
