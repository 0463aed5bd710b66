import { PoolWithout } from './exclusion.js';
import type { Policy, SelectionContext, SelectionOutcome } from './types.js';

/** Each request to the next worker of the pool, in pool order. */
export class RoundRobinPolicy implements Policy {
  readonly name = 'round_robin' as const;
  readonly usesPrefix = false;
  private next = 0;
  readonly #without = new PoolWithout();

  select(ctx: SelectionContext): SelectionOutcome {
    const pool = this.#without.over(ctx.pool, ctx.load, ctx.exclude, null).workers;
    if (pool.length === 0) return { ok: false, reason: 'proposal_empty' };
    const i = this.next++ % pool.length;
    return { ok: true, worker: pool[i]!, backup: pool.length > 1 ? pool[(i + 1) % pool.length] : undefined, reason: 'primary' };
  }
}
