import { paint } from '../cli/index.js';
import { ConfigCodes, classRank } from './codes.js';
import type { ConfigCode, ConfigCodeName, ProblemClass, Severity } from './codes.js';

/** One configuration error or warning, as check-config lists it and serve prints it. */
export interface ConfigProblem {
  code: ConfigCode;
  class: ProblemClass;
  severity: Severity;
  /** The flag concerned, with its dashes (`--worker-queue-limit`), or null. */
  flag: string | null;
  /** Reference wording: lower-case, names flags with `--`, no trailing period. */
  message: string;
  /** Where the offending value came from: `flag`, `env ROUTERCTL_X`, `.routerrc:key`, … */
  origin: string | null;
}

export function problem(
  name: ConfigCodeName,
  message: string,
  where: { flag?: string | null; origin?: string | null } = {},
): ConfigProblem {
  const entry = ConfigCodes[name];
  return {
    code: entry.code,
    class: entry.class,
    severity: entry.severity,
    flag: where.flag ?? null,
    message,
    origin: where.origin ?? null,
  };
}

/** Stable: within a class, problems keep the order the rules found them in. */
export function sortProblems(problems: readonly ConfigProblem[]): ConfigProblem[] {
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => classRank(a.p.class) - classRank(b.p.class) || a.i - b.i)
    .map(({ p }) => p);
}

/**
 * The one-line rendering shared by `check-config` (every problem) and `serve` (the
 * first error), so both print the same line for the same mistake. The origin is
 * added only when it tells more than the message: a value typed on the command line
 * needs no "(from flag)", and a flag the message does not name is named here.
 */
export function formatProblem(p: ConfigProblem, options: { color?: boolean } = {}): string {
  const color = options.color ?? false;
  const label = p.severity === 'error' ? paint('error', 'red', color) : paint('warning', 'yellow', color);
  const named = p.flag !== null && !p.message.includes(p.flag) ? p.flag : null;
  const from = p.origin !== null && p.origin !== 'flag' && !p.message.includes(p.origin) ? `from ${p.origin}` : null;
  const where = [named, from].filter((s): s is string => s !== null).join(' ');
  return `${label} ${p.code}: ${p.message}${where === '' ? '' : ` (${where})`}`;
}

/** The JSON shape of a problem in `check-config --json`: exactly these five keys. */
export function problemJson(p: ConfigProblem): {
  code: string;
  class: ProblemClass;
  flag: string | null;
  message: string;
  origin: string | null;
} {
  return { code: p.code, class: p.class, flag: p.flag, message: p.message, origin: p.origin };
}
