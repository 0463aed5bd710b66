import type { RawEntry } from './argv-source.js';
import { didYouMean } from '../cli/index.js';
import { envOrigin } from './origin.js';
import { problem } from './problem.js';
import type { ConfigProblem } from './problem.js';
import { CONFIG_PATH_ENV, ENV_PREFIX, NON_SETTING_ENV, OPTIONS, envName } from './schema.js';

export interface EnvSource {
  entries: RawEntry[];
  configPath: string | undefined;
  problems: ConfigProblem[];
}

/**
 * Read `ROUTERCTL_<FLAG>` variables. An empty variable counts as unset, as shells
 * and container specs often export empties. Unknown `ROUTERCTL_*` names are not
 * errors (the environment is shared with other tools and versions), but a near miss
 * of a real setting gets a warning, since it is otherwise silently ignored.
 */
export function readEnv(env: NodeJS.ProcessEnv): EnvSource {
  const entries: RawEntry[] = [];
  const problems: ConfigProblem[] = [];
  const known = new Set<string>(NON_SETTING_ENV);
  for (const spec of OPTIONS) {
    const name = envName(spec.flag);
    known.add(name);
    const value = env[name];
    if (value === undefined || value.trim() === '') continue;
    entries.push({ spec, raw: value, origin: envOrigin(name) });
  }
  const settingNames = OPTIONS.map((o) => envName(o.flag));
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith(ENV_PREFIX) || known.has(name)) continue;
    const guess = didYouMean(name, settingNames);
    if (guess !== undefined) {
      problems.push(
        problem('WARN_UNKNOWN_ENV', `${name} is not a routerctl setting and is ignored; did you mean ${guess}?`, { origin: `env ${name}` }),
      );
    }
  }
  const configPath = env[CONFIG_PATH_ENV];
  return { entries, configPath: configPath === undefined || configPath.trim() === '' ? undefined : configPath, problems };
}
