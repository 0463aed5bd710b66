import { PoolWithout } from './exclusion.js';
import type { Policy, SelectionContext, SelectionOutcome } from './types.js';

/** A uniformly random worker of the pool. */
export class RandomPolicy implements Policy {
  readonly name = 'random' as const;
  readonly usesPrefix = false;
  readonly #without = new PoolWithout();

  select(ctx: SelectionContext): SelectionOutcome {
    const pool = this.#without.over(ctx.pool, ctx.load, ctx.exclude, null).workers;
    if (pool.length === 0) return { ok: false, reason: 'proposal_empty' };
    const i = Math.floor(ctx.random() * pool.length);
    return { ok: true, worker: pool[i]!, backup: pool.length > 1 ? pool[(i + 1) % pool.length] : undefined, reason: 'primary' };
  }
}
