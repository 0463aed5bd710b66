import { paint } from '../cli/index.js';
import type { Origin } from './origin.js';
import type { WorkerProbe } from './probe.js';
import { OPTIONS, optionsForDisplay } from './schema.js';
import type { ConfigKey, OptionSpec, RouterConfig } from './schema.js';
import { formatDefault } from './yargs-options.js';

const REDACTED = '(set, hidden)';

/** The configuration keyed by flag name, as rc files and `--json` consumers spell it; secrets hidden. */
export function configByFlag(config: RouterConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of OPTIONS) {
    const value = config[spec.key as ConfigKey];
    out[spec.flag] = (spec as OptionSpec).secret && value !== null ? REDACTED : value;
  }
  return out;
}

export function originsByFlag(origins: Readonly<Record<ConfigKey, Origin>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of OPTIONS) out[spec.flag] = origins[spec.key as ConfigKey].label;
  return out;
}

/** One line per setting: flag, value, where it came from. Values set by the operator stand out from defaults. */
export function renderConfigTable(config: RouterConfig, origins: Readonly<Record<ConfigKey, Origin>>, color: boolean): string {
  const rows = optionsForDisplay().map((spec) => {
    const key = spec.key;
    const value = config[key];
    const isDefault = origins[key].source === 'default';
    const shown = spec.secret && value !== null ? REDACTED : isDefault && spec.defaultLabel ? spec.defaultLabel : formatDefault(value);
    return { flag: spec.flag, value: shown, origin: origins[key].label, set: origins[key].source !== 'default' };
  });
  const w1 = Math.max(...rows.map((r) => r.flag.length));
  const w2 = Math.min(48, Math.max(...rows.map((r) => r.value.length)));
  return rows
    .map((r) => {
      const line = `  ${r.flag.padEnd(w1)}  ${r.value.padEnd(w2)}  `;
      return r.set ? `${paint(line, 'bold', color)}${r.origin}` : `${line}${paint(r.origin, 'dim', color)}`;
    })
    .join('\n');
}

export function renderProbeTable(workers: readonly WorkerProbe[], color: boolean): string {
  if (workers.length === 0) return '  nothing to probe: no --worker-urls (serve would start the embedded simulated fleet)';
  const w = Math.max(...workers.map((x) => x.url.length));
  return workers
    .map((x) => {
      if (!x.reachable) return `  ${x.url.padEnd(w)}  ${paint(`unreachable: ${x.error ?? 'no answer'}`, 'red', color)}`;
      const models = x.models === null ? 'models: ?' : `models: ${x.models.join(', ') || 'none'}`;
      const load =
        x.load === null
          ? paint('load: none', 'yellow', color)
          : `load: ${x.load.endpoint}${x.load.waiting === null ? '' : ` (waiting ${x.load.waiting})`}`;
      const engine = x.engine === null ? '' : `  ${x.engine}`;
      // Push channels only where the engine advertises them: a polled engine's line is as before.
      const push =
        x.push === null
          ? ''
          : `  ${x.push.load === 'live' ? 'load by push' : x.push.load === 'silent' ? paint('load by poll (push silent)', 'yellow', color) : 'load by poll'}` +
            `  kv events${x.push.from === 'config' ? ' (--kv-events)' : ''} (block ${x.push.blockSize ?? '?'})`;
      return `  ${x.url.padEnd(w)}  ${paint('reachable', 'green', color)}${engine}  ${models}  ${load}${push}  dp-size ${x.dpSize ?? '?'}`;
    })
    .join('\n');
}
