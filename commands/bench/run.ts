import type { Argv } from 'yargs';
import { defineCommand } from '../../src/cli/index.js';
import { benchInputs } from './inputs.js';
import { BENCH_RUN_OPTIONS } from '../options/bench.js';

const benchRun = defineCommand({
  command: 'run',
  describe: 'Drive one target, an endpoint (--url) or one simulated configuration, with the chat workload, a --trace or --workload gsp',
  builder: (y: Argv) =>
    y
      .usage(
        '$0 bench run --url URL [options]\n$0 bench run [--router-args "SERVE FLAGS"] [--trace FILE | --workload gsp] [options]\n\n' +
          'Plays a deterministic chat workload (long shared system prompts with Zipf popularity, multi-turn sessions, ' +
          'Poisson arrivals with bursts), streams every request, and reports TTFT, inter-token latency, latency, ' +
          'throughput, errors by status and the engine-reported cached-token ratio. Without --url, the target is one ' +
          'simulated fleet and router started for the run; --trace and --workload gsp replay on it, on either clock.',
      )
      .options(BENCH_RUN_OPTIONS)
      .example('$0 bench run --url http://127.0.0.1:30000 --rate 8 --duration 2m', 'a router already running')
      .example('$0 bench run --url http://127.0.0.1:30000 --chat sessions=32,turns=2', 'fewer, shorter conversations')
      .example('$0 bench run --trace trace.jsonl --clock virtual --router-args="--worker-queue-limit 4"', 'a trace, simulated')
      .epilogue(
        'Exit status: 0 when the run completed and some request succeeded, 1 when none did or a fleet failed to start, ' +
          '2 for invalid options, 130 when interrupted (the report of what ran is still printed). See man routerctl-bench.',
      ),
  handler: async (argv) => {
    const url = argv.url;
    process.exitCode = await benchInputs(argv, { url, compare: url === undefined ? [''] : [], sweep: [] });
  },
});

export default benchRun;
