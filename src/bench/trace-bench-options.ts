import type { GspOptions } from '../workload/index.js';

/** What `bench run|compare --trace` (or `--workload gsp`) is given (docs/bench.md §Traces). */
export interface TraceBenchOptions {
  /** A Mooncake-format trace file, or a generated workload (`--workload gsp`). */
  file: string | undefined;
  gsp?: GspOptions | undefined;
  /** Tokens per hash id (512 in the published traces). */
  traceBlockSize: number;
  speedup: number;
  limit: number | undefined;
  /** Trace seconds [from, to). */
  window: [number, number] | undefined;
  compare: string[];
  sweep: string[];
  routerArgs: string;
  workers: number;
  kvBlocks: number;
  maxRunning: number;
  /** The model's context length per engine (`--sim-context-length`). */
  contextLength: number;
  seed: number;
  sloTtftMs: number;
  json: boolean;
  /** virtual: the router's code on simulated time; wall: real processes over HTTP (the check that virtual time is honest). */
  clock: 'virtual' | 'wall';
  /** Wall clock: simulated time per real time of the engines. */
  simSpeedup: number;
  /** Wall clock: per-request limit. */
  timeoutMs: number;
  /** Pick a configuration on samples 1–3 and check it on 4–6 (docs/bench.md §Recommend); virtual clock only. */
  recommend?: boolean;
  /** Before the run, and on the wall clock one line per configuration as it starts and ends. */
  note?: (line: string) => void;
}
