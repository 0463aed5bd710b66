import { readFileSync } from 'node:fs';

/**
 * Where the build writes the pre-written `--help` texts (`npm run build` runs
 * commands/docs/build-help.ts after tsc): each `--help`, keyed by the words before it
 * (the empty key: `routerctl --help`), as yargs prints it into a pipe. A build output,
 * not a source: nothing of it is committed.
 */
export const HELP_TEXT_FILE = 'dist/help-text.json';

let texts: Readonly<Record<string, string>> | null | undefined;

/**
 * The texts the build wrote, read once; null when there are none (a build without that
 * step), and every `--help` then goes to yargs. Found beside the compiled module
 * (dist/commands/registry/ → dist/) or, for the source run by the tests, under dist/.
 */
export function helpTexts(): Readonly<Record<string, string>> | null {
  if (texts !== undefined) return texts;
  for (const at of ['../../help-text.json', '../../dist/help-text.json']) {
    try {
      return (texts = JSON.parse(readFileSync(new URL(at, import.meta.url), 'utf8')) as Record<string, string>);
    } catch {
      // not there: the next place, or none
    }
  }
  return (texts = null);
}
