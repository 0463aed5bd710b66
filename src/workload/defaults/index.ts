// The generated-shared-prefix workload's parameters and defaults, for the bench flags'
// parser and help text: light enough for every command's `--help`, without the
// generators (they pull in the simulator's random source). The rest is in ../index.ts.
export { GSP_DEFAULTS } from '../gsp-options.js';
export type { GspOptions } from '../gsp-options.js';
