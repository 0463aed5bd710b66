import { helpTexts } from './help-text.js';
import { HELP_WIDTH } from './help-width.js';

/**
 * Set (to anything but empty) to send every `--help` to yargs: how the build reads the
 * texts it writes (commands/docs/build-help.ts), and how the tests compare the two.
 */
export const HELP_FROM_YARGS_ENV = 'ROUTERCTL_HELP_FROM_YARGS';

/**
 * `routerctl [command [subcommand]] --help` (or `-h`) and nothing else, answered from
 * the texts the build wrote (help-text.ts) without loading yargs, which alone costs more than the start-up budget
 * (perf/start-up.ts). The text is what yargs prints into a pipe, so it is given only
 * where yargs would print the same bytes: 100 columns or wider, and a locale whose help
 * words (default, Options:, …) are English. Anything else is undefined, and goes to yargs.
 */
export function prewrittenHelp(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  columns: number | undefined = process.stdout.columns,
): string | undefined {
  if ((env[HELP_FROM_YARGS_ENV] ?? '') !== '') return undefined;
  const last = argv[argv.length - 1];
  if (last !== '--help' && last !== '-h') return undefined;
  const words = argv.slice(0, -1);
  if (!words.every((w) => /^[a-z][a-z-]*$/.test(w))) return undefined;
  const key = words.join(' ');
  if ((columns ?? HELP_WIDTH) < HELP_WIDTH || !yargsSpeaksEnglish(env)) return undefined;
  const texts = helpTexts();
  if (texts === null || !Object.hasOwn(texts, key)) return undefined;
  return texts[key];
}

/**
 * yargs translates its help words by the locale it guesses from these variables, in
 * this order, cut at the first `.` or `:` (guessLocale in yargs-factory.js). English
 * (en, en_US, …; yargs has no other English file) and C/POSIX (no file: the words as
 * written) print English. Other locales without a translation do too, but are left to
 * yargs rather than listed here.
 */
function yargsSpeaksEnglish(env: NodeJS.ProcessEnv): boolean {
  const locale = (env.LC_ALL || env.LC_MESSAGES || env.LANG || env.LANGUAGE || 'en_US').replace(/[.:].*/, '');
  return /^(en(_[A-Za-z]+)?|C|POSIX)$/.test(locale);
}
