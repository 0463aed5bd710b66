import type { Argv } from 'yargs';
import { defineCommand } from '../src/cli/index.js';
import { usageError } from '../src/errors/index.js';
import benchCapture from './bench/capture.js';
import benchCompare from './bench/compare.js';
import benchRun from './bench/run.js';
import { COMMAND_DESCRIPTIONS } from './registry/command-descriptions.js';

/** `routerctl bench`: three subcommands, each with its own flags (docs/bench.md). */
const bench = defineCommand({
  command: 'bench',
  describe: COMMAND_DESCRIPTIONS.bench,
  builder: (y: Argv) =>
    y
      .usage('$0 bench <run|compare|capture> [options]')
      .command(benchRun)
      .command(benchCompare)
      .command(benchCapture)
      .example('$0 bench run --url http://127.0.0.1:30000 --duration 2m', 'a router already running')
      .example('$0 bench compare "--policy round_robin" "--worker-queue-limit 6"', 'two configurations on simulated fleets')
      .example('$0 bench capture today.jsonl --url http://127.0.0.1:30000 --duration 10m', 'record traffic to replay')
      .epilogue('Each subcommand has its own --help. See man routerctl-bench.'),
  handler: () => {
    throw usageError('name what to bench: bench run --url URL, bench compare "ARGS A" "ARGS B", or bench capture FILE --url URL');
  },
});

export default bench;
