// What the bench flags mean, light enough for every command's start-up: the workloads'
// KEY=VALUE specs and the old spellings of bench before its subcommands.
export { CHAT_DEFAULTS, CHAT_KEYS, CHAT_SPEC_HELP, GSP_SPEC_HELP, GSP_SPEC_KEYS, parseChatSpec, parseGspSpec } from './workload-spec.js';
export type { ChatKnobs, GspKnobs } from './workload-spec.js';
export { rewriteLegacyBench } from './legacy-argv.js';
