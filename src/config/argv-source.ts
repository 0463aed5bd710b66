import { didYouMean } from '../cli/index.js';
import { shorten } from './shorten.js';
import { FLAG_ORIGIN } from './origin.js';
import type { Origin } from './origin.js';
import { problem } from './problem.js';
import type { ConfigProblem } from './problem.js';
import { CONFIG_PATH_FLAG, OPTIONS, kebabCase, optionByName } from './schema.js';
import type { OptionSpec } from './schema.js';
import { FOREIGN_FLAGS } from './foreign-flags.js';

/** A value one source offers for one setting, not yet typed. */
export interface RawEntry {
  spec: OptionSpec;
  raw: unknown;
  origin: Origin;
}

/** Keys yargs adds itself, and global flags other layers own (bin handles --no-color). */
const YARGS_KEYS = new Set(['_', '$0', 'help', 'h', 'version', 'V', 'color']);

/** The command words that precede the flags in `argv._`. */
const COMMAND_WORDS = new Set(['serve', 'check-config']);

export interface ArgvSource {
  entries: RawEntry[];
  configPath: string | undefined;
  problems: ConfigProblem[];
}

/**
 * Read the settings out of yargs-parsed flags. yargs runs without `strict` for the
 * config commands so that unknown flags reach this pass and become parse problems
 * with a did-you-mean, listed by check-config instead of aborting it. yargs reports
 * each flag under both spellings (`worker-queue-limit` and `workerQueueLimit`), so
 * names are folded to kebab-case first.
 */
export function readArgv(argv: Record<string, unknown>, ignore: readonly string[] = []): ArgvSource {
  const ignored = new Set([...YARGS_KEYS, ...ignore.flatMap((k) => [k, kebabCase(k)])]);
  const entries = new Map<string, RawEntry>();
  const unknown = new Map<string, unknown>();
  const problems: ConfigProblem[] = [];
  let configPath: string | undefined;

  for (const [key, value] of Object.entries(argv)) {
    if (ignored.has(key) || value === undefined) continue;
    const kebab = kebabCase(key);
    if (ignored.has(kebab)) continue;
    if (kebab === CONFIG_PATH_FLAG) {
      configPath = typeof value === 'string' ? value : Array.isArray(value) ? String(value[value.length - 1]) : String(value);
      continue;
    }
    const spec = optionByName(kebab);
    if (spec) {
      // Prefer the kebab-case key: it is the one yargs fills first and exactly.
      if (!entries.has(spec.flag) || key === spec.flag) entries.set(spec.flag, { spec, raw: value, origin: FLAG_ORIGIN });
    } else if (!unknown.has(kebab)) {
      unknown.set(kebab, value);
    }
  }

  for (const [name, value] of unknown) problems.push(unknownFlag(name, value));

  const positionals = Array.isArray(argv._) ? [...(argv._ as unknown[])] : [];
  if (typeof positionals[0] === 'string' && COMMAND_WORDS.has(positionals[0])) positionals.shift();
  for (const word of positionals) {
    problems.push(problem('PARSE_UNEXPECTED_ARGUMENT', `unexpected argument '${shorten(String(word))}'`, { origin: 'flag' }));
  }

  return { entries: [...entries.values()], configPath, problems };
}

function unknownFlag(name: string, value: unknown): ConfigProblem {
  // yargs turns `--no-foo` into foo=false; show what the operator typed.
  const typed = value === false && !name.startsWith('no-') ? `no-${name}` : name;
  const foreign = FOREIGN_FLAGS.get(name);
  if (foreign !== undefined) {
    return problem('PARSE_UNKNOWN_FLAG', `unknown flag --${typed}: ${foreign}`, { flag: `--${typed}`, origin: 'flag' });
  }
  const flags = [
    CONFIG_PATH_FLAG,
    ...OPTIONS.map((o) => o.flag),
    ...OPTIONS.filter((o) => o.type === 'boolean').map((o) => `no-${o.flag}`),
  ];
  const guess = didYouMean(typed, flags);
  return problem('PARSE_UNKNOWN_FLAG', `unknown flag --${typed}${guess ? `; did you mean --${guess}?` : ''}`, {
    flag: `--${typed}`,
    origin: 'flag',
  });
}
