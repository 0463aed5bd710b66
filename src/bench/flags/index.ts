// What the bench flags mean, light enough for every command's start-up: the workloads'
// KEY=VALUE specs, the old spellings of bench before its subcommands and the presets' names.
export { CHAT_DEFAULTS, CHAT_KEYS, CHAT_SPEC_HELP, GSP_SPEC_HELP, GSP_SPEC_KEYS, parseChatSpec, parseGspSpec } from './workload-spec.js';
export type { ChatKnobs, GspKnobs } from './workload-spec.js';
export { PRESET_NAMES } from '../preset/preset-names.js';
