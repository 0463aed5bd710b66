import type { Argv } from 'yargs';
import { addConfigOptions } from '../src/config/flags/index.js';
import { StopSignals, colorEnabled, defineCommand } from '../src/cli/index.js';
import { COMMAND_DESCRIPTIONS } from './registry/command-descriptions.js';

const serve = defineCommand({
  command: 'serve',
  describe: COMMAND_DESCRIPTIONS.serve,
  builder: (y: Argv) =>
    addConfigOptions(y)
      .usage(
        '$0 serve [settings] [--config PATH]\n\n' +
          'Runs the cache-aware router in front of --worker-urls; without them, on the embedded simulated fleet ' +
          'with synthetic traffic. Settings: flags > ROUTERCTL_* env > rc file > defaults (see check-config).',
      )
      .example('$0 serve --worker-queue-limit 6', 'the embedded simulated fleet, with the queue gate on')
      .example('$0 serve --worker-urls http://127.0.0.1:31000 --no-tui', 'one engine, log lines only')
      .example('$0 serve --port 0 --no-tui --log-format json', 'a free port, JSON logs')
      .epilogue(
        'SIGTERM drains: /readyz answers 503 and in-flight requests get at most --shutdown-drain-secs to finish (SIGINT skips the ' +
          'readiness pause); what is left then is cut. A second signal cuts at once. Exit status 0: every request finished; ' +
          '143 (SIGTERM) or 130 (SIGINT): some were cut. See man routerctl-serve.',
      ),
  handler: async (argv) => {
    // Loaded here, not above, so that --help reads the option table alone.
    const { formatProblem, resolveConfig } = await import('../src/config/index.js');
    const resolved = await resolveConfig({ argv });
    if (resolved.errors.length > 0) {
      process.stderr.write(`${formatProblem(resolved.errors[0]!, { color: colorEnabled(process.stderr) })}\n`);
      process.stderr.write('run routerctl check-config with the same settings to see every problem\n');
      process.exitCode = 2;
      return;
    }
    for (const w of resolved.warnings) process.stderr.write(`${formatProblem(w, { color: colorEnabled(process.stderr) })}\n`);
    // The console needs a terminal both ways: Ink draws on stdout and reads keys from stdin.
    if (resolved.config.tui && process.stdout.isTTY === true && process.stdin.isTTY === true) {
      const { runServeConsole } = await import('../src/serve/index.js');
      process.exitCode = await runServeConsole(resolved.config);
      return;
    }
    const { startRouter, serveUntilStopped } = await import('../src/serve/index.js');
    // Handlers go in before the URL is printed: a supervisor may signal as soon as it reads it.
    const stops = new StopSignals().listen(['SIGTERM', 'SIGINT']);
    const running = await startRouter(resolved.config);
    process.stdout.write(`${running.url}\n`);
    process.exitCode = await serveUntilStopped(running, stops);
  },
});

export default serve;
