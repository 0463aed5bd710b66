import type { Argv } from 'yargs';
import { adminToken, defineCommand } from '../../src/cli/index.js';
import { usageError } from '../../src/errors/index.js';
import { BENCH_CAPTURE_OPTIONS } from '../options/bench.js';

const benchCapture = defineCommand({
  command: 'capture [file]',
  describe: "Record a live router's traffic as a trace, to replay with bench run or bench compare --trace",
  builder: (y: Argv) =>
    y
      .usage(
        '$0 bench capture FILE --url URL [--duration 10m] [options]\n\n' +
          'Writes what a running routerctl router serves for --duration as a Mooncake-format trace (arrivals, sizes, ' +
          'prefix block ids; never text), read from its GET /admin/capture.',
      )
      .positional('file', { type: 'string', describe: 'the trace to write (JSONL)' })
      .options(BENCH_CAPTURE_OPTIONS)
      .example('$0 bench capture today.jsonl --url http://127.0.0.1:30000 --duration 10m', 'ten minutes of traffic')
      .epilogue(
        'Exit status: 0 when the capture ran its course, 1 when the router could not be read, 2 for invalid options, ' +
          '130 when interrupted (the file keeps what was seen). See man routerctl-bench.',
      ),
  handler: async (argv) => {
    const file = argv.file;
    if (file === undefined) throw usageError('bench capture writes a trace: name its file, e.g. bench capture today.jsonl --url URL');
    if (argv.url === undefined) throw usageError('bench capture listens to a running router: give it with --url');
    const { parseDuration, runCapture } = await import('../../src/bench/index.js');
    const durationMs = parseDuration(argv.duration);
    if (durationMs === undefined || durationMs <= 0)
      throw usageError(`--duration takes a duration such as 60s or 10m (got '${String(argv.duration)}')`);
    const stop = new AbortController();
    const onSigint = (): void => stop.abort();
    process.once('SIGINT', onSigint);
    try {
      const r = await runCapture({
        url: argv.url,
        file,
        durationMs,
        blockTokens: argv['trace-block-size'],
        token: adminToken(argv.token),
        signal: stop.signal,
      });
      const line = {
        file,
        requests: r.requests,
        dropped: r.dropped,
        digest: r.digest,
        block_size: argv['trace-block-size'],
        cut_short_s: r.cutShortMs === undefined ? null : Math.round(r.cutShortMs / 1000),
      };
      if (r.cutShortMs !== undefined)
        process.stderr.write(
          `warning: the router ended the capture after ${Math.round(r.cutShortMs / 1000)} s (it stopped or restarted); the file has what came before\n`,
        );
      if (argv.json) process.stdout.write(`${JSON.stringify(line)}\n`);
      else
        process.stdout.write(
          `captured ${r.requests} request${r.requests === 1 ? '' : 's'} to ${file} (digest ${r.digest}, blocks of ${argv['trace-block-size']} tokens${r.dropped > 0 ? `; ${r.dropped} dropped: the capture read too slowly` : ''})\n` +
            `replay: routerctl bench compare --trace ${file} --clock virtual "" "--worker-queue-limit 4"\n`,
        );
      process.exitCode = stop.signal.aborted ? 130 : 0;
    } finally {
      process.off('SIGINT', onSigint);
    }
  },
});

export default benchCapture;
