import { helpWidth } from './registry/help-width.js';

// Loaded in main once the plain --version and --help are ruled out, as yargs is: src/cli's index alone is
// most of what a plain --help loads besides its text.
type Errors = typeof import('../src/errors/index.js');
type Cli = typeof import('../src/cli/index.js');

/**
 * `main`, the entry bin/routerctl.js calls. yargs and the commands are loaded only once
 * `--version` and a plain `--help` are ruled out: alone, they need neither, and start-up
 * is most of their cost (perf/start-up.ts). `--help` then prints the text the build
 * took from yargs (dist/help-text.json, registry/help-text.ts). The commands are listed
 * in command-list.ts.
 */

/** `routerctl --version` (or `-V`) alone, answered before yargs loads, as yargs would answer it. */
const VERSION_ONLY = new Set(['--version', '-V']);

/**
 * Parse argv and run the chosen command. Resolves to the process exit status; never
 * throws and never prints a stack trace for a user error.
 */
export async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && VERSION_ONLY.has(argv[0]!)) {
    const { packageVersion } = await import('../src/cli/index.js');
    // console.log, as yargs prints: it ignores a reader gone (`| true`), where a bare write dies of EPIPE.
    console.log(packageVersion());
    return 0;
  }
  const last = argv[argv.length - 1];
  if (last === '--help' || last === '-h') {
    const text = (await import('./registry/prewritten-help.js')).prewrittenHelp(argv);
    if (text !== undefined) {
      console.log(text.replace(/\n$/, ''));
      return 0;
    }
  }
  const [{ default: yargs }, { commands }, errors, cli] = await Promise.all([
    import('yargs'),
    import('./registry/command-list.js'),
    import('../src/errors/index.js'),
    import('../src/cli/index.js'),
  ]);
  const { RouterctlError, UsageError, ErrorCodes } = errors;
  const { packageVersion, usageLine } = cli;
  const parser = yargs(argv)
    .scriptName('routerctl')
    .usage('$0 <command> [options]\n\nOperator CLI and live console for cache-aware routing over SGLang/vLLM fleets.')
    .command(commands)
    .demandCommand(1, 'name a command: serve, top, explain, doctor, check-config, sim or bench (see routerctl --help)')
    .recommendCommands()
    .strict()
    .version(packageVersion())
    .alias('h', 'help')
    .alias('V', 'version')
    .epilogue('Every command has a man page: man routerctl-<command> (files under man/).')
    .wrap(helpWidth(process.stdout.columns))
    .exitProcess(false)
    .fail((msg, err) => {
      // Rethrow so one catch below prints exactly one line; yargs would otherwise run the handler.
      if (err instanceof RouterctlError) throw err;
      // yargs wraps coerce() failures and its own validation in YError: those are usage errors.
      if (err && err.name !== 'YError') throw err;
      throw new UsageError(ErrorCodes.USAGE, usageLine(err?.message ?? msg ?? 'invalid usage'));
    });

  try {
    await parser.parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    return report(err, errors, cli);
  }
}

function report(err: unknown, errors: Errors, cli: Cli): number {
  const { RouterctlError, UsageError, ErrorCodes } = errors;
  const { colorEnabled, paint, usageLine } = cli;
  // A command's builder is async (command-list.ts), and yargs then rejects with its own
  // errors (a coerce() failure) instead of passing them to .fail(): the same usage error.
  if (err instanceof Error && err.name === 'YError') return report(new UsageError(ErrorCodes.USAGE, usageLine(err.message)), errors, cli);
  const color = colorEnabled(process.stderr);
  if (err instanceof RouterctlError) {
    process.stderr.write(`${paint('error', 'red', color)} ${err.code}: ${err.message}\n`);
    if (err instanceof UsageError && err.code === ErrorCodes.USAGE) {
      process.stderr.write('run routerctl --help for usage\n');
    }
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${paint('error', 'red', color)} ${ErrorCodes.INTERNAL}: ${message}\n`);
  if (process.env.ROUTERCTL_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
  return 1;
}
