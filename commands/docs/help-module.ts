import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import benchCapture from '../bench/capture.js';
import benchCompare from '../bench/compare.js';
import benchRun from '../bench/run.js';
import { COMMAND_DESCRIPTIONS } from '../registry/command-descriptions.js';
import { HELP_FROM_YARGS_ENV } from '../registry/prewritten-help.js';
import type { GeneratedFile } from './generate.js';

const run = promisify(execFile);

/** Where the pre-written help lives (commands/index.ts prints it without loading yargs). */
export const HELP_MODULE_PATH = 'commands/registry/help-text.ts';

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

/**
 * commands/registry/help-text.ts as `npm run docs` writes it: one template literal per
 * `--help`, the bytes yargs prints, so that the file is valid TypeScript whatever the
 * text holds and prettier leaves it as written. Read from the build (bin/routerctl.js),
 * so the build must be current.
 */
export async function generateHelpModule(root: string): Promise<GeneratedFile> {
  const paths = helpPaths();
  const texts = await Promise.all(paths.map((words) => yargsHelp(root, words)));
  const entries = paths.map((words, i) => `  ${propertyKey(words.join(' '))}: \`${templateBody(texts[i]!)}\`,`);
  const text = [
    '// Written by npm run docs (commands/docs/help-module.ts) from what yargs prints; do not edit by hand.',
    '',
    '/** Each `--help`, keyed by the words before it (the empty key: `routerctl --help`), as yargs prints it into a pipe. */',
    'export const HELP_TEXT: Readonly<Record<string, string>> = {',
    ...entries,
    '};',
    '',
  ].join('\n');
  return { path: HELP_MODULE_PATH, text };
}

/** A key as prettier writes it (quoteProps as-needed, single quotes). */
function propertyKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : `'${key}'`;
}

function templateBody(text: string): string {
  return text.replace(/[\\`]/g, (c) => `\\${c}`).replace(/\$\{/g, '\\${');
}
