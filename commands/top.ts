import type { Argv, CommandModule } from 'yargs';
import { ADMIN_TOKEN_OPTION, adminToken, wholeNumberAtLeast, wholeNumberBetween } from '../src/cli/index.js';
import { usageError } from '../src/errors/index.js';

const SORT_KEYS = ['waiting', 'rejections', 'running', 'inflight', 'age', 'url'] as const;
const SOURCES = ['auto', 'admin', 'prometheus'] as const;

interface TopArgs {
  url: string[];
  engines: string[] | undefined;
  record: string | undefined;
  replay: string | undefined;
  watch: boolean;
  'interval-ms': number;
  token: string | undefined;
  source: (typeof SOURCES)[number];
  once: boolean;
  json: boolean;
  sort: (typeof SORT_KEYS)[number];
  reverse: boolean;
  filter: string;
  'block-size': number;
}

const top: CommandModule<object, TopArgs> = {
  command: 'top',
  describe: "Live console for a running router (routerctl's admin API, or any router's Prometheus /metrics)",
  builder: (y: Argv) =>
    y
      .usage(
        '$0 top [--url URL ...] [options]\n\n' +
          "Shows the fleet behind a router: each engine's queue against the limit, gated workers, gate rejections, " +
          "the decision mix and the affinity the gate gave up. Reads routerctl's /admin/stream, or /metrics of any " +
          'router (the Rust sgl-router included). Several --url (replicas) merge into one view.',
      )
      .option('url', {
        type: 'array',
        string: true,
        default: ['http://127.0.0.1:30000'],
        describe: 'router base URL; repeat for router replicas (merged into one view)',
      })
      .option('engines', {
        type: 'array',
        string: true,
        describe:
          'show bare SGLang/vLLM engines, no router: their queues and running requests from their load endpoints (instead of --url)',
      })
      .option('interval-ms', {
        type: 'number',
        default: 1000,
        // The router's /admin/stream takes 100..60000 (docs/http-edge.md).
        describe: 'update interval, 100 to 60000',
        coerce: wholeNumberBetween('interval-ms', 100, 60_000),
      })
      .option('token', ADMIN_TOKEN_OPTION)
      .option('source', { choices: SOURCES, default: 'auto' as const, describe: 'auto: admin API, else Prometheus /metrics' })
      .option('once', { type: 'boolean', default: false, describe: 'print one plain-text table and exit' })
      .option('json', { type: 'boolean', default: false, describe: 'print the merged state as JSON and exit' })
      .option('watch', { type: 'boolean', default: false, describe: 'with --json: one JSON line per update (NDJSON) until stopped' })
      .option('replay', {
        type: 'string',
        describe: 'play a --record FILE back (p pause, n step, + and - speed); with --json or --once: the state at its end',
      })
      .option('record', { type: 'string', describe: 'append every router update to FILE (NDJSON), for review after an incident' })
      .option('sort', { choices: SORT_KEYS, default: 'waiting' as const, describe: 'initial worker order (key s cycles it)' })
      .option('reverse', { type: 'boolean', default: false, describe: 'turn the worker order around (key S)' })
      .option('filter', { type: 'string', default: '', describe: 'show only workers whose URL contains this (key /)' })
      .option('block-size', {
        type: 'number',
        default: 16,
        describe: 'tokens per prefix block, for the ≈tokens of the diverted histogram',
        coerce: wholeNumberAtLeast('block-size', 1),
      })
      .option('color', { type: 'boolean', default: true, describe: 'colour on a terminal (--no-color or NO_COLOR turns it off)' })
      .example('$0 top', 'the console for the router on 127.0.0.1:30000')
      .example('$0 top --url http://10.0.0.5:30000 --url http://10.0.0.6:30000', 'two replicas, one fleet view')
      .example('$0 top --once --sort rejections', 'one table, workers the gate turns away most first')
      .example("$0 top --json | jq '.workers[] | {url, waiting, gated}'", 'the merged state for scripts')
      .check((argv) => {
        const a = argv as unknown as TopArgs;
        if (a.watch && !a.json) throw usageError('--watch streams JSON lines: give it with --json');
        if (a.replay !== undefined && (a.record !== undefined || a.watch || a.engines !== undefined))
          throw usageError('--replay plays a recording: it takes no --record, --watch or --engines');
        if (a.record !== undefined && (a.once || (a.json && !a.watch)))
          throw usageError('--record keeps a live session: use it with the console or with --json --watch, not --once or a single --json');
        return true;
      })
      .example('$0 top --url http://sgl-router:29000 --source prometheus', 'the Rust sgl-router, from its /metrics')
      .example('$0 top --json --watch --record incident.ndjson', 'stream the merged state and keep every router update')
      .example('$0 top --engines http://10.0.0.5:30001 http://10.0.0.6:30001', 'engines with no router in front: their queues side by side')
      .epilogue(
        'Keys: q quit, p pause, s sort, S reverse, / filter, ? help. Exit status: 0, 1 unreachable / wrong token / not a router, 2 usage.',
      ) as unknown as Argv<TopArgs>,
  handler: async (argv) => {
    const { runTop } = await import('../src/top/index.js');
    const token = adminToken(argv.token);
    await runTop({
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
};

export default top;
