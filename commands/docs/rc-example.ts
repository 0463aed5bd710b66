import { OPTION_GROUPS, POLICIES, defaultConfig, formatDefault, optionsForDisplay } from '../../src/config/index.js';
import type { OptionSpec } from '../../src/config/index.js';
import { fullStop, plainText, sentence } from './roff.js';
import { defaultText, policyOf } from './setting-rules.js';

const HEADER = `# routerctl rc file: every setting, with its default and what it means.
# Written by npm run docs from the schema (src/config/schema.ts): edit that, not this.
#
# Copy to .routerrc (YAML or JSON), .routerrc.json, .routerrc.yaml or .routerrc.yml,
# or put the same keys under "routerctl" in package.json. serve and check-config
# find the file by walking up from the current folder (or take --config PATH).
# Precedence: flags > ROUTERCTL_* environment variables > this file > defaults.
# Keys are the flag names, kebab-case or camelCase. A commented-out key is unset;
# \`key:\` with no value (null) also means unset.
#
# Check a file before launching:  routerctl check-config --config .routerrc
# The active lines below restate the defaults of the default policy, cache_aware.
`;

const WIDTH = 82;

/** .routerrc.example, whole: the header, then every setting in its display group. */
export function rcExample(): string {
  const out = [HEADER];
  const options = optionsForDisplay();
  for (const group of OPTION_GROUPS) {
    out.push(`# --- ${group.label} ---`);
    for (const spec of options.filter((o) => o.group === group.label)) out.push(...comment(spec), ...keyLines(spec));
    out.push('');
  }
  return out.join('\n');
}

function comment(spec: OptionSpec): string[] {
  const policy = policyOf(spec);
  const text = [
    sentence(spec.describe),
    spec.details ? sentence(plainText(spec.details)) : '',
    policy ? `Only under --policy ${policy}: an error under any other.` : '',
    `Default: ${fullStop(defaultText(spec))}`,
  ]
    .filter((p) => p !== '')
    .join(' ');
  return wrap(text, WIDTH - 2).map((l) => `# ${l}`);
}

/** Words to lines of at most `width`; "Default:" stays on the line of its value, where readers (and the rc test) look for both. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.replace(/Default: /g, 'Default:\u0000').split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.map((l) => l.replace(/\u0000/g, ' '));
}

/**
 * The key itself: active when the file can restate its default as is (a value, of a
 * setting the default policy takes, that is not secret and not the simulated fleet's,
 * which is exclusive with worker URLs), else commented out with an example value.
 */
function keyLines(spec: OptionSpec): string[] {
  const policy = policyOf(spec);
  const active =
    spec.default !== null &&
    !Array.isArray(spec.default) &&
    !spec.secret &&
    spec.group !== 'Simulated fleet (without --worker-urls)' &&
    (policy === undefined || policy === defaultConfig().policy);
  if (active) return yaml(spec.flag, spec.default);
  const shown = spec.example ?? (spec.default === null || (Array.isArray(spec.default) && spec.default.length === 0) ? null : spec.default);
  return yaml(spec.flag, shown).map((l) => `# ${l}`);
}

function yaml(key: string, value: unknown, indent = ''): string[] {
  if (Array.isArray(value)) return [`${indent}${key}:`, ...value.map((v) => `${indent}  - ${scalar(v)}`)];
  if (value !== null && typeof value === 'object') {
    return [
      `${indent}${key}:`,
      ...Object.entries(value).flatMap(([k, v]) => yaml(/[:*]/.test(k) ? JSON.stringify(k) : scalar(k), v, `${indent}  `)),
    ];
  }
  return [value === null ? `${indent}${key}:` : `${indent}${key}: ${scalar(value)}`];
}

/** A YAML scalar, quoted only when plain would read as something else (a number, a boolean, a comment, a mapping). */
function scalar(value: unknown): string {
  if (typeof value !== 'string') return formatDefault(value);
  const plain = /^[A-Za-z_/][\w./:*@-]*$/.test(value) && !/^(?:y|yes|n|no|on|off|true|false|null)$/i.test(value);
  return plain || POLICIES.includes(value as never) ? value : JSON.stringify(value);
}
