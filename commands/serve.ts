import type { Argv, CommandModule } from 'yargs';
import { addConfigOptions, formatProblem, resolveConfig } from '../src/config/index.js';
import { colorEnabled } from '../src/cli/color.js';

interface ServeArgs {
  [flag: string]: unknown;
}

const serve: CommandModule<object, ServeArgs> = {
  command: 'serve',
  describe: 'Run the router (and, on a terminal, its live console); without --worker-urls, on a simulated fleet',
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
      .epilogue('SIGTERM drains (readyz 503, --shutdown-drain-secs, then in-flight requests finish); a second signal cuts the pause short.') as unknown as Argv<ServeArgs>,
  handler: async (argv) => {
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
      const { runServeConsole } = await import('../src/serve/serve-console.js');
      process.exitCode = await runServeConsole(resolved.config);
      return;
    }
    const { startRouter } = await import('../src/serve/run-router.js');
    // Handlers go in before the URL is printed: a supervisor may signal as soon as it reads it.
    let running: Awaited<ReturnType<typeof startRouter>> | undefined;
    let signals = 0;
    let skipPause = false;
    const requested = new Promise<NodeJS.Signals>((resolve) => {
      const onSignal = (signal: NodeJS.Signals): void => {
        // SIGINT (an operator at the keyboard) or a second signal cuts the drain pause short.
        signals++;
        if (signal === 'SIGINT' || signals > 1) skipPause = true;
        if (signals === 1) resolve(signal);
        else void running?.stop();
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
    running = await startRouter(resolved.config);
    process.stdout.write(`${running.url}\n`);
    const signal = await requested;
    running.log.info('shutting down', { signal, inflight: running.router.inflight, drain_pause_s: skipPause ? 0 : resolved.config.shutdownDrainSecs });
    const stopping = running.stop();
    if (skipPause) void running.stop();
    await stopping;
  },
};

export default serve;
