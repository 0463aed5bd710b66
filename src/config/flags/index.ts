// The router's settings as yargs options, for the builders of serve and check-config:
// light enough that `--help` loads nothing else of src/config (no rc-file reader, no
// probe, no validator). The rest of the area is in ../index.ts.
export { addConfigOptions } from '../yargs-options.js';
