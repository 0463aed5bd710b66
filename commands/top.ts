import type { Argv } from 'yargs';
import { TOP_OPTIONS } from './options/top.js';
import { adminToken, defineCommand } from '../src/cli/index.js';
import { usageError } from '../src/errors/index.js';
import { COMMAND_DESCRIPTIONS } from './registry/command-descriptions.js';

const top = defineCommand({
  command: 'top',
  describe: COMMAND_DESCRIPTIONS.top,
  builder: (y: Argv) =>
    y
      .usage(
        '$0 top [--url URL ...] [options]\n\n' +
          "Shows the fleet behind a router: each engine's queue against the limit, gated workers, gate rejections, " +
          "the decision mix and the affinity the gate gave up. Reads routerctl's /admin/stream, or /metrics of any " +
          'router (the Rust sgl-router included). Several --url (replicas) merge into one view.',
      )
      .options(TOP_OPTIONS)
      .example('$0 top', 'the console for the router on 127.0.0.1:30000')
      .example('$0 top --url http://10.0.0.5:30000 --url http://10.0.0.6:30000', 'two replicas, one fleet view')
      .example('$0 top --once --sort rejections', 'one table, workers the gate turns away most first')
      .example("$0 top --json | jq '.workers[] | {url, waiting, gated}'", 'the merged state for scripts')
      .check((argv) => {
        if (argv.watch && !argv.json) throw usageError('--watch streams JSON lines: give it with --json');
        if (argv.replay !== undefined && (argv.record !== undefined || argv.watch || argv.engines !== undefined))
          throw usageError('--replay plays a recording: it takes no --record, --watch or --engines');
        if (argv.record !== undefined && (argv.once || (argv.json && !argv.watch)))
          throw usageError('--record keeps a live session: use it with the console or with --json --watch, not --once or a single --json');
        return true;
      })
      .example('$0 top --url http://sgl-router:29000 --source prometheus', 'the Rust sgl-router, from its /metrics')
      .example('$0 top --json --watch --record incident.ndjson', 'stream the merged state and keep every router update')
      .example('$0 top --engines http://10.0.0.5:30001 http://10.0.0.6:30001', 'engines with no router in front: their queues side by side')
      .epilogue(
        'Keys: q quit, p pause, s sort, S reverse, / filter, ? help. Exit status: 0; 1 no replica answers (unreachable / wrong token / ' +
          'not a router); 2 usage; 3 (--once) a replica draining or down.',
      ),
  handler: async (argv) => {
    const { runTop } = await import('../src/top/index.js');
    const token = adminToken(argv.token);
    process.exitCode = await runTop({
      // --engines reads the engines themselves: no router, so no decisions, limit or gate.
      urls: (argv.engines ?? argv.url).map(String),
      intervalMs: argv['interval-ms'],
      token,
      source: argv.engines ? 'engine' : argv.source,
      once: argv.once,
      json: argv.json,
      sort: argv.sort,
      reverse: argv.reverse,
      filter: argv.filter,
      blockSize: argv['block-size'],
      record: argv.record,
      replay: argv.replay,
      watch: argv.watch,
    });
  },
});

export default top;
