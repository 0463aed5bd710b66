import type { Argv } from 'yargs';
import { EXPLAIN_OPTIONS } from './options/explain.js';
import { adminToken, defineCommand } from '../src/cli/index.js';
import { COMMAND_DESCRIPTIONS } from './registry/command-descriptions.js';

const explain = defineCommand({
  command: 'explain',
  describe: COMMAND_DESCRIPTIONS.explain,
  builder: (y: Argv) =>
    y
      .usage(
        '$0 explain [--url URL] [--request ID] [options]\n\n' +
          "Reads a routerctl router's decision records (GET /admin/decisions). With --request, tells one request's story: " +
          'what owned its prefix, what the queue gate made of each owner, what was chosen and given up, and what the engine then reported. ' +
          'Without it, prints the recent decisions one line each and follows new ones until stopped.',
      )
      .options(EXPLAIN_OPTIONS)
      .example('$0 explain --request r3f9a1c-2b', 'why that request went where it went')
      .example('$0 explain', 'every decision as it happens, one line each')
      .example('$0 explain --once --json | jq \'select(.decision == "cache_worker_queued")\'', 'the recent diversions, for scripts')
      .epilogue('Exit status: 0; 1 unreachable, wrong token, not a routerctl router, or no such request; 2 usage.'),
  handler: async (argv) => {
    const { runExplain } = await import('../src/explain/index.js');
    await runExplain({
      url: argv.url,
      token: adminToken(argv.token),
      request: argv.request,
      json: argv.json,
      once: argv.once,
      limit: argv.limit,
      intervalMs: argv['interval-ms'],
    });
  },
});

export default explain;
