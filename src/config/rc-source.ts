import type { RawEntry } from './argv-source.js';
import { didYouMean } from '../cli/index.js';
import { FOREIGN_FLAGS } from './foreign-flags.js';
import { rcOrigin } from './origin.js';
import { problem } from './problem.js';
import { shorten } from './shorten.js';
import type { ConfigProblem } from './problem.js';
import { CONFIG_PATH_FLAG, OPTIONS, kebabCase, optionByName } from './schema.js';

export interface RcSource {
  entries: RawEntry[];
  problems: ConfigProblem[];
}

/**
 * Map the rc file's keys onto settings. Keys may be kebab-case or camelCase; a key
 * spelt both ways is ambiguous and reported, an unknown key is an error with a
 * did-you-mean (a typo in an rc file would otherwise be silently ignored). A null
 * value (`worker-queue-limit:` with nothing after it) means "not set here".
 */
export function readRc(data: Record<string, unknown>, display: string, keyPrefix = ''): RcSource {
  const entries = new Map<string, RawEntry>();
  const problems: ConfigProblem[] = [];

  let unknown = 0;
  for (const [key, raw] of Object.entries(data)) {
    const spec = key === CONFIG_PATH_FLAG ? undefined : optionByName(key);
    if (!spec) {
      // A file that is mostly not ours (a pasted data set) deserves one line, not one per key.
      if (++unknown <= MAX_LISTED_UNKNOWN_KEYS) {
        const origin = rcOrigin(display, `${keyPrefix}${shorten(key)}`);
        problems.push(
          problem('PARSE_UNKNOWN_KEY', `unknown key ${shorten(key)} in ${display}; ${unknownKeyHint(key)}`, { origin: origin.label }),
        );
      }
      continue;
    }
    const origin = rcOrigin(display, `${keyPrefix}${key}`);
    const previous = entries.get(spec.flag);
    if (previous && previous.origin.source === 'rc') {
      problems.push(
        problem('PARSE_DUPLICATE_KEY', `${display} sets --${spec.flag} twice (${previous.origin.key} and ${keyPrefix}${key})`, {
          flag: `--${spec.flag}`,
          origin: origin.label,
        }),
      );
      // Carry on with the kebab-case spelling, the documented one.
      if (key !== spec.flag) continue;
    }
    if (raw === null || raw === undefined) continue;
    entries.set(spec.flag, { spec, raw, origin });
  }
  if (unknown > MAX_LISTED_UNKNOWN_KEYS) {
    const more = unknown - MAX_LISTED_UNKNOWN_KEYS;
    problems.push(
      problem(
        'PARSE_TOO_MANY_UNKNOWN_KEYS',
        `${display} has ${more} more unknown key${more === 1 ? '' : 's'} (${unknown} in all); is it a routerctl rc file?`,
        { origin: display },
      ),
    );
  }
  return { entries: [...entries.values()], problems };
}

/** Unknown keys listed one by one; past this the rest are counted in one problem. */
export const MAX_LISTED_UNKNOWN_KEYS = 20;

function unknownKeyHint(key: string): string {
  const kebab = kebabCase(key);
  if (kebab === CONFIG_PATH_FLAG) return 'an rc file cannot point to another one (use $import)';
  const foreign = FOREIGN_FLAGS.get(kebab);
  if (foreign !== undefined) return foreign;
  const guess = didYouMean(
    kebab,
    OPTIONS.map((o) => o.flag),
  );
  return guess ? `did you mean ${guess}?` : 'see .routerrc.example for every key';
}
