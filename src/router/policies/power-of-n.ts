import { PoolWithout } from './exclusion.js';
import type { LoadView, Policy, PolicyWorker, SelectionContext, SelectionOutcome } from './types.js';

/**
 * Sample k distinct workers and take the least loaded: engine-reported waiting +
 * running when both have a fresh sample, else router-local in-flight counts.
 * The scan is linear and only a strict improvement displaces the incumbent (the
 * comparison is not transitive over mixed sets, so it is never used to sort).
 */
export class PowerOfNPolicy implements Policy {
  readonly name = 'power_of_n' as const;
  readonly usesPrefix = false;
  private readonly choices: number;
  private readonly picked: number[] = [];
  readonly #without = new PoolWithout();

  constructor(choices: number) {
    this.choices = Math.max(1, choices);
  }

  select(ctx: SelectionContext): SelectionOutcome {
    const pool = this.#without.over(ctx.pool, ctx.load, ctx.exclude, null).workers;
    if (pool.length === 0) return { ok: false, reason: 'proposal_empty' };
    const k = Math.min(this.choices, pool.length);
    let best: PolicyWorker | undefined;
    let second: PolicyWorker | undefined;
    const picked = this.picked;
    picked.length = 0;
    for (let d = 0; d < k; d++) {
      let i: number;
      if (k === pool.length) i = d;
      else {
        do i = Math.floor(ctx.random() * pool.length);
        while (picked.includes(i));
        picked.push(i);
      }
      const w = pool[i]!;
      if (!best || lighter(ctx.load, w, best)) {
        second = best;
        best = w;
      } else if (!second || lighter(ctx.load, w, second)) {
        second = w;
      }
    }
    return { ok: true, worker: best!, backup: second, reason: 'primary' };
  }
}

function lighter(load: LoadView, a: PolicyWorker, b: PolicyWorker): boolean {
  const la = load.basic(a);
  const lb = load.basic(b);
  if (la && lb) {
    const qa = la.waiting + la.running;
    const qb = lb.waiting + lb.running;
    if (qa !== qb) return qa < qb;
  }
  return a.inflight < b.inflight;
}
