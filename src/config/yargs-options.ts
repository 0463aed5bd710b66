import type { Argv, Options } from 'yargs';
import { CONFIG_PATH_FLAG, optionsForDisplay } from './schema.js';
import type { OptionSpec } from './schema.js';

/**
 * Declare every setting on a yargs command (serve and check-config share this), for
 * help and for parsing only: no yargs defaults (so resolveConfig can tell a typed
 * value from a default and record its origin), no `choices` and no number type (so
 * `--policy cache_aware_zmq` and `--worker-queue-limit abc` reach resolveConfig with
 * the text the operator typed and come back as parse problems in the reference
 * order), and `strict` off for the same reason: unknown flags are reported by
 * resolveConfig with a did-you-mean, not by yargs before the handler runs.
 */
export function addConfigOptions<T>(y: Argv<T>): Argv<T> {
  let out = y.strict(false);
  // The settings first, the gate leading (OPTION_GROUPS); --config after them, so help opens on what an operator tunes.
  for (const spec of optionsForDisplay()) out = out.option(spec.flag, yargsOption(spec));
  return out.option(CONFIG_PATH_FLAG, {
    type: 'string',
    describe: 'read settings from this rc file instead of searching for one (YAML, JSON or JS)',
    group: 'Configuration:',
  });
}

function yargsOption(spec: OptionSpec): Options {
  const o: Options = {
    describe: spec.describe + typeHint(spec),
    group: `${spec.group}:`,
    defaultDescription: spec.defaultLabel ?? formatDefault(spec.default),
  };
  if (spec.type === 'boolean') o.type = 'boolean';
  if (spec.type === 'string' || spec.type === 'enum' || spec.type === 'kv-events') o.type = 'string';
  if (spec.type === 'url-list' || spec.type === 'string-list') {
    o.type = 'array';
    o.string = true;
  }
  return o;
}

function typeHint(spec: OptionSpec): string {
  if (spec.type === 'integer') return ' [integer]';
  if (spec.type === 'number') return ' [number]';
  return '';
}

export function formatDefault(value: unknown): string {
  if (value === null) return 'unset';
  if (Array.isArray(value))
    return value.length === 0 ? 'none' : value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(' ');
  return String(value);
}
