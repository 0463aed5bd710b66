import { POLICY_FAMILIES, formatDefault } from '../../src/config/index.js';
import type { OptionSpec } from '../../src/config/index.js';

/** What a setting's default reads as on every page: its label, else the value. */
export function defaultText(spec: OptionSpec): string {
  return spec.defaultLabel ?? formatDefault(spec.default);
}

/** The policy a setting belongs to, when set under another it is a policy error. */
export function policyOf(spec: OptionSpec): string | undefined {
  return POLICY_FAMILIES.find((f) => f.family === spec.policyFamily)?.policy;
}

/**
 * What validation checks, in words, read from the entry's type, range and policy
 * family (the value rules of docs/configuration.md say how each is worded in a message).
 */
export function ruleText(spec: OptionSpec): string {
  const kind: Record<OptionSpec['type'], string> = {
    integer: 'integer',
    number: 'finite',
    string: 'non-empty',
    boolean: 'boolean',
    enum: (spec.choices ?? []).map((c) => `\`${c}\``).join(', '),
    'url-list': 'http(s) URLs, no duplicates',
    'string-list': spec.key === 'selector' ? 'k=v label terms' : 'words',
    'kv-events': 'a mapping, see [KV event endpoints](#kv-event-endpoints)',
  };
  const r = spec.range;
  const bounds = [
    r?.atLeast !== undefined ? `≥ ${r.atLeast}` : '',
    r?.greaterThan !== undefined ? `> ${r.greaterThan}` : '',
    r?.nonNegative ? '≥ 0' : '',
    r?.atMost !== undefined ? `≤ ${r.atMost}` : '',
    r?.unitInterval ? 'in [0, 1]' : '',
  ].filter((b) => b !== '');
  const policy = policyOf(spec);
  return [
    [kind[spec.type], bounds.join(', ')].filter((p) => p !== '').join(' '),
    policy ? `\`${policy}\` only` : '',
    spec.secret ? 'secret: never printed' : '',
  ]
    .filter((p) => p !== '')
    .join('; ');
}
