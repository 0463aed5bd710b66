import type { Argv } from 'yargs';
import { DOCTOR_OPTIONS } from './options/doctor.js';
import { adminToken, defineCommand } from '../src/cli/index.js';
import { usageError } from '../src/errors/index.js';
import { COMMAND_DESCRIPTIONS } from './registry/command-descriptions.js';

const doctor = defineCommand({
  command: 'doctor',
  describe: COMMAND_DESCRIPTIONS.doctor,
  builder: (y: Argv) =>
    y
      .usage(
        '$0 doctor [--url URL | --file FILE] [--json]\n\n' +
          "Decomposes the prompt tokens of a router's recent requests into what the engines reused and where the rest went: " +
          'held by no worker (a cold workload, or engines too small), gate diversions, routing misses, capacity (evictions the index did not see, a full KV cache), ' +
          'and a stale index (an engine that lost its cache). Each loss above 5 % gets one finding with the setting to change.',
      )
      .options(DOCTOR_OPTIONS)
      .check((argv) => {
        if (argv.url !== undefined && argv.file !== undefined) throw usageError('--url reads a live router, --file a saved one: give one');
        return true;
      })
      .example('$0 doctor', 'the router on 127.0.0.1:30000')
      .example(
        '$0 explain --once --json --limit 10000 > decisions.ndjson && $0 doctor --file decisions.ndjson',
        'keep the records, diagnose later',
      )
      .epilogue('Exit status: 0; 1 unreachable, wrong token, not a routerctl router; 2 usage or an unreadable file.'),
  handler: async (argv) => {
    const { runDoctor } = await import('../src/explain/index.js');
    await runDoctor({ url: argv.url, file: argv.file, json: argv.json, token: adminToken(argv.token) });
  },
});

export default doctor;
