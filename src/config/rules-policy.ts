import { problem } from './problem.js';
import type { RuleContext } from './rule-context.js';
import { OPTIONS } from './schema.js';
import type { ConfigKey, Policy, PolicyFamily } from './schema.js';
import type { ConfigCodeName } from './codes.js';

/**
 * Policy rules: a flag the chosen policy would ignore. A tuning flag that does
 * nothing is the silent misconfiguration operators asked to catch, so it is an error,
 * one per offending flag (the JSON names each). Families run in the reference order
 * (docs/configuration.md §Policy rules). The pressure wording drops the reference's
 * "session_aware or": routerctl has no such policy to point the operator at. The docs'
 * policy table is written from this list.
 */
export const POLICY_FAMILIES: readonly { family: PolicyFamily; policy: Policy; code: ConfigCodeName; message: (flag: string) => string }[] =
  [
    { family: 'power-of-n', policy: 'power_of_n', code: 'POLICY_REQUIRES_POWER_OF_N', message: (f) => `${f} requires --policy power_of_n` },
    {
      family: 'pressure-guard',
      policy: 'cache_aware',
      code: 'POLICY_PRESSURE_GUARD',
      message: (f) => `${f} requires --policy cache_aware`,
    },
    {
      family: 'cache-tuning',
      policy: 'cache_aware',
      code: 'POLICY_REQUIRES_CACHE_AWARE',
      message: () => 'cache candidate tuning flags require --policy cache_aware',
    },
    {
      family: 'pressure-tuning',
      policy: 'cache_aware',
      code: 'POLICY_PRESSURE_TUNING',
      message: () => 'pressure guard tuning requires --policy cache_aware',
    },
  ];

export function checkPolicy(ctx: RuleContext): void {
  const policy = ctx.config.policy;
  for (const { family, policy: needed, code, message } of POLICY_FAMILIES) {
    if (policy === needed) continue;
    for (const spec of OPTIONS) {
      if (spec.policyFamily !== family) continue;
      const key = spec.key as ConfigKey;
      if (!ctx.isSet(key)) continue;
      ctx.push(problem(code, message(`--${spec.flag}`), ctx.at(key)));
    }
  }
}
