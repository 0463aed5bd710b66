import type { Options } from 'yargs';
import { BENCH_CAPTURE_OPTIONS, BENCH_COMPARE_OPTIONS, BENCH_RUN_OPTIONS } from './bench.js';
import { DOCTOR_OPTIONS } from './doctor.js';
import { EXPLAIN_OPTIONS } from './explain.js';
import { SIM_OPTIONS } from './sim.js';
import { TOP_OPTIONS } from './top.js';

export { BENCH_CAPTURE_OPTIONS, BENCH_COMPARE_OPTIONS, BENCH_RUN_OPTIONS, DOCTOR_OPTIONS, EXPLAIN_OPTIONS, SIM_OPTIONS, TOP_OPTIONS };

/** One command's (or bench subcommand's) flags and the man page whose OPTIONS section lists them. */
export interface OptionTable {
  /** As typed after `routerctl`: `sim`, `bench run`. */
  command: string;
  man: string;
  options: Readonly<Record<string, Options>>;
}

/**
 * Every option table a yargs builder reads, for the man page generator. serve and
 * check-config are not here: their flags are the config schema's OPTIONS.
 */
export const OPTION_TABLES: readonly OptionTable[] = [
  { command: 'top', man: 'routerctl-top.1', options: TOP_OPTIONS },
  { command: 'explain', man: 'routerctl-explain.1', options: EXPLAIN_OPTIONS },
  { command: 'doctor', man: 'routerctl-doctor.1', options: DOCTOR_OPTIONS },
  { command: 'sim', man: 'routerctl-sim.1', options: SIM_OPTIONS },
  { command: 'bench run', man: 'routerctl-bench.1', options: BENCH_RUN_OPTIONS },
  { command: 'bench compare', man: 'routerctl-bench.1', options: BENCH_COMPARE_OPTIONS },
  { command: 'bench capture', man: 'routerctl-bench.1', options: BENCH_CAPTURE_OPTIONS },
];
