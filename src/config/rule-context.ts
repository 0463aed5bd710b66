import { isExplicit } from './origin.js';
import type { Origin } from './origin.js';
import type { ConfigProblem } from './problem.js';
import type { ConfigKey, RouterConfig } from './schema.js';
import { optionByKey } from './schema.js';

/** What every validation rule sees: the merged values and where each came from. */
export class RuleContext {
  readonly problems: ConfigProblem[] = [];
  /** Keys whose value failed a value rule; later rules do not compare against them. */
  readonly invalid = new Set<ConfigKey>();

  constructor(
    readonly config: RouterConfig,
    readonly origins: Readonly<Record<ConfigKey, Origin>>,
  ) {}

  /** Given by the operator (flag, env or rc), as opposed to a default. */
  isSet(key: ConfigKey): boolean {
    return isExplicit(this.origins[key]);
  }

  flag(key: ConfigKey): string {
    return `--${optionByKey(key).flag}`;
  }

  /** Where-fields for a problem about `key`. */
  at(key: ConfigKey): { flag: string; origin: string } {
    return { flag: this.flag(key), origin: this.origins[key].label };
  }

  push(p: ConfigProblem): void {
    this.problems.push(p);
  }
}
