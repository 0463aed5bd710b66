import type { Argv, CommandModule } from 'yargs';
import { ADMIN_TOKEN_OPTION, adminToken } from '../src/cli/index.js';
import { usageError } from '../src/errors/index.js';

interface DoctorArgs {
  url: string | undefined;
  file: string | undefined;
  json: boolean;
  token: string | undefined;
}

const doctor: CommandModule<object, DoctorArgs> = {
  command: 'doctor',
  describe:
    "Where the cached tokens went: a hit-rate breakdown from the router's decision records, with one finding and setting per large loss",
  builder: (y: Argv) =>
    y
      .usage(
        '$0 doctor [--url URL | --file FILE] [--json]\n\n' +
          "Decomposes the prompt tokens of a router's recent requests into what the engines reused and where the rest went: " +
          'held by no worker (a cold workload, or engines too small), gate diversions, routing misses, capacity (evictions the index did not see, a full KV cache), ' +
          'and a stale index (an engine that lost its cache). Each loss above 5 % gets one finding with the setting to change.',
      )
      .option('url', {
        type: 'string',
        describe: 'a live router: its decision ring (GET /admin/decisions)',
        defaultDescription: 'http://127.0.0.1:30000',
      })
      .option('file', {
        type: 'string',
        describe: 'records saved earlier: routerctl explain --once --json --limit N output, or an /admin/decisions document',
      })
      .option('json', { type: 'boolean', default: false, describe: 'the breakdown as JSON' })
      .option('token', ADMIN_TOKEN_OPTION)
      .check((argv) => {
        const a = argv as unknown as DoctorArgs;
        if (a.url !== undefined && a.file !== undefined) throw usageError('--url reads a live router, --file a saved one: give one');
        return true;
      })
      .example('$0 doctor', 'the router on 127.0.0.1:30000')
      .example(
        '$0 explain --once --json --limit 10000 > decisions.ndjson && $0 doctor --file decisions.ndjson',
        'keep the records, diagnose later',
      )
      .epilogue(
        'Exit status: 0; 1 unreachable, wrong token, not a routerctl router; 2 usage or an unreadable file.',
      ) as unknown as Argv<DoctorArgs>,
  handler: async (argv) => {
    const { runDoctor } = await import('../src/explain/index.js');
    await runDoctor({ url: argv.url, file: argv.file, json: argv.json, token: adminToken(argv.token) });
  },
};

export default doctor;
