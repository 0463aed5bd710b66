import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import benchCapture from '../bench/capture.js';
import benchCompare from '../bench/compare.js';
import benchRun from '../bench/run.js';
import { COMMAND_DESCRIPTIONS } from '../registry/command-descriptions.js';
import { HELP_FROM_YARGS_ENV } from '../registry/prewritten-help.js';

const run = promisify(execFile);

/** Every command, and bench's subcommands: each `--help` that gets a pre-written text. */
export function helpPaths(): string[][] {
  const bench = [benchRun, benchCompare, benchCapture].map((c) => String(c.command).split(' ')[0]!);
  return [[], ...Object.keys(COMMAND_DESCRIPTIONS).map((c) => [c]), ...bench.map((s) => ['bench', s])];
}

/** What yargs prints for `routerctl …path --help` from the build, into a pipe (so at the width help-width.ts names) and in English. */
export async function yargsHelp(root: string, words: readonly string[]): Promise<string> {
  const { stdout, stderr } = await run(process.execPath, [path.join(root, 'bin/routerctl.js'), ...words, '--help'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, [HELP_FROM_YARGS_ENV]: '1', LC_ALL: 'en_US.UTF-8', NO_COLOR: '1' },
  });
  if (stderr !== '') throw new Error(`routerctl ${words.join(' ')} --help wrote to stderr: ${stderr}`);
  return stdout;
}
