import type { Origin } from './origin.js';
import type { ConfigProblem } from './problem.js';
import { RuleContext } from './rule-context.js';
import { checkCrossFlags } from './rules-cross-flag.js';
import { checkPolicy } from './rules-policy.js';
import { checkValues } from './rules-value.js';
import type { ConfigKey, RouterConfig } from './schema.js';

/**
 * The one validator behind `serve` and `check-config`: value rules, then policy
 * rules, then cross-flag rules (parse problems are found while the sources are
 * read). Every rule runs, so check-config can list every problem; serve takes the
 * first error of the sorted list, which is the one the reference router would stop
 * at.
 */
export function validateConfig(config: RouterConfig, origins: Readonly<Record<ConfigKey, Origin>>): ConfigProblem[] {
  const ctx = new RuleContext(config, origins);
  checkValues(ctx);
  checkPolicy(ctx);
  checkCrossFlags(ctx);
  return ctx.problems;
}
