import type { Argv } from 'yargs';
import { defineCommand } from '../../src/cli/index.js';
import { usageError } from '../../src/errors/index.js';
import { benchInputs } from './inputs.js';
import { BENCH_COMPARE_OPTIONS } from '../options/bench.js';

const benchCompare = defineCommand({
  command: 'compare [configurations..]',
  describe: 'Compare router configurations on identical simulated fleets, fed the same inputs',
  builder: (y: Argv) =>
    y
      // A configuration such as "--policy round_robin" is one word that starts with --: keep it as a value, not a flag.
      // yargs still takes such a word for a flag when the text before its first non-word character names one of
      // ours, so no option here may be named like the first word of a router flag (model, load, …); a test checks.
      .parserConfiguration({ 'unknown-options-as-args': true })
      .usage(
        '$0 bench compare "SERVE FLAGS A" "SERVE FLAGS B" ... [--sweep FLAG=V1,V2] [options]\n\n' +
          'Each configuration (one quoted string of serve flags; "" = defaults) gets a fresh simulated fleet and router ' +
          "(separate processes, same seed, same arrivals) and the results are printed side by side with the routers' " +
          'decision counters and charts. --trace and --workload gsp replay the same requests through each, on the wall ' +
          "clock or the virtual one (the router's own code on a simulated clock, no sockets). A configuration that starts " +
          'with a peer router\'s name ("smg", "vllm-router", then its own flags) runs that router instead: cache_aware, ' +
          'its defaults otherwise, on the wall clock.',
      )
      .positional('configurations', { type: 'string', array: true, describe: 'serve flags of each configuration, one quoted string each' })
      .options(BENCH_COMPARE_OPTIONS)
      .example(
        '$0 bench compare "--policy round_robin" "--policy cache_aware" "--worker-queue-limit 6"',
        'three configurations, 8 simulated engines each',
      )
      .example('$0 bench compare "" --sweep worker-queue-limit=2,4,6,8,12 --duration 60s', 'what each queue limit buys, against no limit')
      .example('$0 bench compare "" "--worker-queue-limit 6" smg vllm-router', 'beside the Shepherd Model Gateway and the vLLM router')
      .example('$0 bench compare --trace trace.jsonl --clock virtual "" "--worker-queue-limit 4"', 'a trace through two configurations')
      .example(
        '$0 bench compare --trace trace.jsonl --clock virtual --recommend "" --sweep worker-queue-limit=4,8',
        'pick on windows 1-3 of the trace, check on 4-6',
      )
      .example('$0 bench compare --preset b2b-saas', "llm-d's b2b-saas table, reproduced beside the published figures")
      .example('$0 bench compare "--policy round_robin" "" --duration 5s --json | jq .runs[].summary.ttft_ms', 'for scripts')
      .epilogue(
        'Exit status: 0 when the run completed and some request succeeded, 1 when none did or a fleet failed to start, ' +
          '2 for invalid options, 130 when interrupted (the report of what ran is still printed). See man routerctl-bench.',
      ),
  handler: async (argv) => {
    const compare = (argv.configurations ?? []).map(String);
    const sweep = (argv.sweep ?? []).map(String);
    // An unknown flag is taken for a configuration (above); --url is the one a user of the old form reaches for.
    if (compare.some((c) => /^--url(?:[=\s]|$)/.test(c)))
      throw usageError('--url and bench compare are exclusive: bench run --url benches one endpoint, bench compare simulated fleets');
    if (argv.preset !== undefined) {
      if (compare.length > 0 || sweep.length > 0 || argv.trace !== undefined || argv.recommend)
        throw usageError(
          '--preset runs its own fleet, workload and arms: give it alone (bench compare --preset b2b-saas [--seed N] [--json])',
        );
      const { runPresetCommand } = await import('../../src/bench/index.js');
      process.exitCode = runPresetCommand(argv.preset, argv.seed, argv.json, process.stdout, (l) => process.stderr.write(`${l}\n`));
      return;
    }
    if (compare.length === 0 && sweep.length === 0)
      throw usageError('name what to compare: bench compare "ARGS A" "ARGS B" (and/or --sweep FLAG=V1,V2)');
    process.exitCode = await benchInputs(argv, { url: undefined, compare, sweep, recommend: argv.recommend });
  },
});

export default benchCompare;
