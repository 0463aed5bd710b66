import type { Options } from 'yargs';
import { envName, formatDefault, optionsForDisplay } from '../../src/config/index.js';
import type { OptionSpec } from '../../src/config/index.js';
import { fullStop, roffFlag, roffText, sentence } from './roff.js';
import { defaultText } from './setting-rules.js';

const PLACEHOLDER: Record<OptionSpec['type'], string> = {
  integer: 'N',
  number: 'X',
  string: 'TEXT',
  boolean: '',
  enum: '',
  'url-list': 'URL...',
  'string-list': 'TEXT...',
  'kv-events': 'MAPPING',
};

function choicesRoff(choices: readonly unknown[]): string {
  return choices.map((c) => `\\fB${roffText(String(c))}\\fR`).join('|');
}

/** The OPTIONS of serve and check-config: every setting of the schema, in its display groups. */
export function settingsRoff(): string {
  const out: string[] = [];
  let group = '';
  for (const spec of optionsForDisplay()) {
    if (spec.group !== group) {
      group = spec.group;
      out.push(`.SS ${roffText(group)}`);
    }
    out.push('.TP', settingHead(spec), settingBody(spec));
  }
  return out.join('\n');
}

function settingHead(spec: OptionSpec): string {
  const flag = roffFlag(spec.flag);
  if (spec.type === 'boolean') return spec.default === true ? `${flag}, ${roffFlag(`no-${spec.flag}`)}` : flag;
  if (spec.type === 'enum') return `${flag} ${choicesRoff(spec.choices ?? [])}`;
  return `${flag} \\fI${roffText(spec.placeholder ?? PLACEHOLDER[spec.type])}\\fR`;
}

function settingBody(spec: OptionSpec): string {
  const parts = [sentence(spec.describe), spec.details ? sentence(spec.details) : '', `Default: ${fullStop(defaultText(spec))}`];
  return `${parts
    .filter((p) => p !== '')
    .map(roffText)
    .join(' ')} Environment: \\fB${roffText(envName(spec.flag))}\\fR.`;
}

/** One command's table (`{ command, options }`), as a .SS heading or not. */
export interface CommandTable {
  command: string;
  options: Readonly<Record<string, Options>>;
}

/**
 * The OPTIONS of a command whose yargs builder reads a table: one entry per flag, in
 * the table's groups. A page with several tables (bench's subcommands) gets one
 * subsection per command instead, its flags in group order.
 */
export function tablesRoff(tables: readonly CommandTable[]): string {
  const out: string[] = [];
  for (const table of tables) {
    const entries = Object.entries(table.options).filter(([, o]) => !o.hidden);
    const groups = [...new Set(entries.map(([, o]) => o.group ?? ''))];
    if (tables.length > 1) out.push(`.SS ${roffText(`routerctl ${table.command}`)}`);
    for (const group of groups) {
      if (tables.length === 1 && group !== '') out.push(`.SS ${roffText(group.replace(/:$/, ''))}`);
      for (const [name, o] of entries) if ((o.group ?? '') === group) out.push('.TP', flagHead(name, o), flagBody(o));
    }
  }
  return out.join('\n');
}

const NAMED_VALUE = /\b(FILE|PATH|URL|DIR|NAME|SPEC|KEY=VALUE|MS|N)\b/;

function flagHead(name: string, o: Options): string {
  const aliases = (Array.isArray(o.alias) ? o.alias : o.alias ? [o.alias] : []).filter((a) => a.length === 1);
  const names = [...aliases.map(roffFlag), roffFlag(name)].join(', ');
  if (o.type === 'boolean' || o.boolean) return o.default === true ? `${names}, ${roffFlag(`no-${name}`)}` : names;
  if (o.choices) return `${names} ${choicesRoff(o.choices as readonly unknown[])}`;
  const named = NAMED_VALUE.exec(o.describe ?? o.description ?? '')?.[1];
  const value = named ?? (o.type === 'number' || o.number ? 'N' : 'TEXT');
  const many = o.type === 'array' || o.array ? '...' : '';
  return `${names} \\fI${roffText(value + many)}\\fR`;
}

function flagBody(o: Options): string {
  const described = sentence(o.describe ?? o.description ?? '');
  const shown = o.defaultDescription ?? (o.default === undefined || o.default === '' ? undefined : formatDefault(o.default));
  const parts = [described, shown === undefined ? '' : `Default: ${fullStop(shown)}`];
  if (o.deprecated) parts.push(typeof o.deprecated === 'string' ? `Deprecated: ${sentence(o.deprecated)}` : 'Deprecated.');
  return parts
    .filter((p) => p !== '')
    .map(roffText)
    .join(' ');
}
