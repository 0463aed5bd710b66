import type { Argv, CommandModule } from 'yargs';
import { ADMIN_TOKEN_OPTION, adminToken, wholeNumberBetween } from '../src/cli/index.js';

interface ExplainArgs {
  url: string;
  request: string | undefined;
  json: boolean;
  once: boolean;
  limit: number;
  'interval-ms': number;
  token: string | undefined;
}

const explain: CommandModule<object, ExplainArgs> = {
  command: 'explain',
  describe: 'Why did a request go where it went: one decision as a story, or every decision as it happens',
  builder: (y: Argv) =>
    y
      .usage(
        '$0 explain [--url URL] [--request ID] [options]\n\n' +
          "Reads a routerctl router's decision records (GET /admin/decisions). With --request, tells one request's story: " +
          'what owned its prefix, what the queue gate made of each owner, what was chosen and given up, and what the engine then reported. ' +
          'Without it, prints the recent decisions one line each and follows new ones until stopped.',
      )
      .option('url', { type: 'string', default: 'http://127.0.0.1:30000', describe: 'router base URL' })
      .option('request', {
        type: 'string',
        describe: "the request's id (its x-request-id response header, or the client's own x-request-id)",
      })
      .option('json', { type: 'boolean', default: false, describe: 'the record as JSON (one line per decision when following)' })
      .option('once', { type: 'boolean', default: false, describe: 'print the recent decisions and exit instead of following' })
      .option('limit', {
        type: 'number',
        default: 20,
        describe: 'recent decisions printed first, 1 to 10000',
        coerce: wholeNumberBetween('limit', 1, 10_000),
      })
      .option('interval-ms', {
        type: 'number',
        default: 500,
        describe: 'how often to ask for new decisions, 100 to 60000',
        coerce: wholeNumberBetween('interval-ms', 100, 60_000),
      })
      .option('token', ADMIN_TOKEN_OPTION)
      .example('$0 explain --request r3f9a1c-2b', 'why that request went where it went')
      .example('$0 explain', 'every decision as it happens, one line each')
      .example('$0 explain --once --json | jq \'select(.decision == "cache_worker_queued")\'', 'the recent diversions, for scripts')
      .epilogue(
        'Exit status: 0; 1 unreachable, wrong token, not a routerctl router, or no such request; 2 usage.',
      ) as unknown as Argv<ExplainArgs>,
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
};

export default explain;
