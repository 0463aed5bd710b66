import { readArgv } from './argv-source.js';
import type { RawEntry } from './argv-source.js';
import { coerce } from './coerce.js';
import { readEnv } from './env-source.js';
import { DEFAULT_ORIGIN, FLAG_ORIGIN, envOrigin } from './origin.js';
import type { Origin } from './origin.js';
import { problem, sortProblems } from './problem.js';
import type { ConfigProblem } from './problem.js';
import { loadRcFile } from './rc-file.js';
import { readRc } from './rc-source.js';
import { CONFIG_PATH_ENV, OPTIONS, defaultConfig } from './schema.js';
import type { ConfigKey, RouterConfig } from './schema.js';
import { validateConfig } from './validate.js';

export interface ResolveInput {
  /** yargs-parsed flags (strict off, no yargs defaults), `_` and `$0` included or not. */
  argv: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Overrides `--config` and ROUTERCTL_CONFIG. */
  configPath?: string;
  /** Command-specific flags in `argv` that are not settings (check-config's `json`, …). */
  ignore?: readonly string[];
}

export interface ResolvedConfig {
  config: RouterConfig;
  origins: Record<ConfigKey, Origin>;
  /** Sorted by class: parse, value, policy, cross-flag. `errors[0]` is what serve prints. */
  errors: ConfigProblem[];
  warnings: ConfigProblem[];
  /** Absolute path of the rc file read, if any. */
  rcFile?: string;
}

/**
 * Merge flags > ROUTERCTL_* env > rc file > defaults, remembering each value's
 * origin, then validate. Never throws for an operator's mistake: everything wrong
 * comes back as a problem. A value that cannot be parsed is reported and the next
 * source down is used, so one typo does not hide the rest of the report.
 */
export async function resolveConfig(input: ResolveInput): Promise<ResolvedConfig> {
  const env = input.env ?? process.env;
  const cwd = input.cwd ?? process.cwd();
  const problems: ConfigProblem[] = [];

  const flags = readArgv(input.argv, input.ignore);
  const fromEnv = readEnv(env);
  problems.push(...flags.problems, ...fromEnv.problems);

  let configPath: string | undefined;
  let configOrigin: Origin = FLAG_ORIGIN;
  if (input.configPath !== undefined) configPath = input.configPath;
  else if (flags.configPath !== undefined) configPath = flags.configPath;
  else if (fromEnv.configPath !== undefined) {
    configPath = fromEnv.configPath;
    configOrigin = envOrigin(CONFIG_PATH_ENV);
  }

  let rcEntries: RawEntry[] = [];
  let rcFile: string | undefined;
  if (configPath !== undefined && configPath.trim() === '') {
    problems.push(problem('PARSE_MISSING_VALUE', '--config needs a path', { flag: '--config', origin: configOrigin.label }));
  } else {
    const rc = await loadRcFile({ cwd, ...(configPath === undefined ? {} : { configPath }), configOrigin });
    if (rc.kind === 'failed') problems.push(rc.problem);
    if (rc.kind === 'loaded') {
      rcFile = rc.file;
      const read = readRc(rc.data, rc.display, rc.keyPrefix);
      rcEntries = read.entries;
      problems.push(...read.problems);
      if (rc.shadowed.length > 0) {
        problems.push(
          problem(
            'WARN_MULTIPLE_RC_FILES',
            `${rc.display} shadows ${rc.shadowed.join(', ')} in the same folder; only ${rc.display} is read`,
            {
              origin: rc.display,
            },
          ),
        );
      }
    }
  }

  const { config, origins } = merge([flags.entries, fromEnv.entries, rcEntries], problems);
  problems.push(...validateConfig(config, origins));

  const sorted = sortProblems(problems);
  return {
    config,
    origins,
    errors: sorted.filter((p) => p.severity === 'error'),
    warnings: sorted.filter((p) => p.severity === 'warning'),
    ...(rcFile === undefined ? {} : { rcFile }),
  };
}

/** `layers` highest first. Parse problems of every layer are reported, used or not. */
function merge(layers: readonly RawEntry[][], problems: ConfigProblem[]): { config: RouterConfig; origins: Record<ConfigKey, Origin> } {
  const config = defaultConfig() as unknown as Record<ConfigKey, unknown>;
  const origins = Object.fromEntries(OPTIONS.map((o) => [o.key, DEFAULT_ORIGIN])) as Record<ConfigKey, Origin>;
  const byFlag = layers.map((entries) => new Map(entries.map((e) => [e.spec.flag, e])));
  for (const spec of OPTIONS) {
    let chosen = false;
    for (const layer of byFlag) {
      const entry = layer.get(spec.flag);
      if (!entry) continue;
      const result = coerce(entry.spec, entry.raw, entry.origin.source === 'default' ? 'rc' : entry.origin.source);
      if (!result.ok) {
        problems.push(problem(result.code, result.message, { flag: `--${spec.flag}`, origin: entry.origin.label }));
        continue;
      }
      if (chosen) continue;
      config[spec.key] = result.value;
      origins[spec.key] = entry.origin;
      chosen = true;
    }
  }
  return { config: config as unknown as RouterConfig, origins };
}
