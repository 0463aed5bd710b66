// What other areas may import from src/config. Everything else is internal.
export { resolveConfig } from './resolve.js';
export type { ResolveInput, ResolvedConfig } from './resolve.js';

export {
  OPTIONS,
  OPTION_GROUPS,
  POLICIES,
  QUEUE_GATE_MODES,
  ADMISSION_MODES,
  CAPACITY_ADMISSION_MODES,
  LOG_FORMATS,
  defaultConfig,
  envName,
  optionByKey,
  optionByName,
  optionsForDisplay,
} from './schema.js';
export type {
  RouterConfig,
  ConfigKey,
  Policy,
  QueueGateMode,
  AdmissionMode,
  CapacityAdmissionMode,
  LogFormat,
  OptionDecl,
  OptionSpec,
  OptionType,
  OptionGroup,
  PolicyFamily,
  Range,
} from './schema.js';
export { POLICY_FAMILIES } from './rules-policy.js';
export { formatDefault } from './yargs-options.js';

export { addConfigOptions } from './yargs-options.js';
export { parseSelector, selectorQuery } from './label-selector.js';
export type { Selector } from './label-selector.js';

export { ConfigCodes, PROBLEM_CLASSES } from './codes.js';
export type { ConfigCode, ConfigCodeEntry, ProblemClass, Severity } from './codes.js';

export { formatProblem, problemJson } from './problem.js';
export type { ConfigProblem } from './problem.js';

export type { Origin } from './origin.js';

export { RC_SEARCH_PLACES } from './rc-file.js';

export { probeWorkers } from './probe.js';
export type { ProbeOptions, ProbeReport, PushProbe, WorkerProbe, LoadEndpoint } from './probe.js';

export { configByFlag, originsByFlag, renderConfigTable, renderProbeTable } from './report.js';
