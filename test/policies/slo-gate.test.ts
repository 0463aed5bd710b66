/**
 * The slo gate and SLO admission (docs/routing.md §SLO gate, §SLO admission) as tables,
 * through CacheAwarePolicy.select and sloAdmission. Every engine has learnt the same
 * line, TTFT = 10 ms + 0.1 ms per uncached token (10,000 tokens/s), so each prediction
 * is written out in its row; what differs is the prefill pending on each. Owners a (9 of
 * 10 blocks) and b (6 of 10) hold a 10,000-token prompt's prefix; c holds none and is the
 * least loaded, so the fallback (every worker sampled) is c.
 */
import { describe, expect, it } from 'vitest';
import { CacheAwarePolicy } from '../../src/router/policies/cache-aware/cache-aware-policy.js';
import { cacheAwareConfig } from '../../src/router/policies/cache-aware/config.js';
import { PrefillEstimator } from '../../src/router/policies/prefill-rate/index.js';
import { queueGate } from '../../src/router/policies/queue-gate.js';
import { sloAdmission, sloRetryAfterS } from '../../src/router/policies/slo-admission.js';
import type { PolicyWorker } from '../../src/router/policies/types.js';
import { context, flat, signal, snapshot } from './fixture.js';
import type { Row } from './fixture.js';

const GOAL = 2000;
const INPUT = 10_000;
let nextSlot = 1000;

/** A worker whose estimator learnt TTFT = 10 + 0.1 × tokens; `pending` prefill tokens ahead; cold when `learnt` is false. */
function engine(id: string, pending: number, learnt = true): PolicyWorker {
  const prefill = new PrefillEstimator();
  if (learnt) for (let i = 0; i < 16; i++) prefill.observe(200 + 200 * i, 10 + 0.1 * (200 + 200 * i));
  prefill.pending = pending;
  return { id: `http://${id}:30000`, slot: nextSlot++, inflight: 0, prefill };
}

interface Fleet {
  a: PolicyWorker;
  b: PolicyWorker;
  c: PolicyWorker;
}

/** Pending tokens on a, b, c (and which have learnt nothing); c runs nothing, a and b run 5 each. */
function select(pending: readonly [number, number, number], cold: readonly string[] = [], queued?: readonly [number, number, number]) {
  const f: Fleet = {
    a: engine('a', pending[0], !cold.includes('a')),
    b: engine('b', pending[1], !cold.includes('b')),
    c: engine('c', pending[2], !cold.includes('c')),
  };
  const rows: Row[] = [
    [f.a, 5, 0, 0, 10_000_000, { waitingUncached: queued?.[0] ?? 0 }],
    [f.b, 5, 0, 0, 10_000_000, { waitingUncached: queued?.[1] ?? 0 }],
    [f.c, 0, 0, 0, 10_000_000, { waitingUncached: queued?.[2] ?? 0 }],
  ];
  const gate = queueGate({ queueGate: 'slo', ttftSloMs: GOAL, workerQueueLimit: null, saturationQueueFloor: null });
  const policy = new CacheAwarePolicy(cacheAwareConfig({ gate, minLoadChoices: 3 }));
  const load = snapshot(rows);
  const outcome = policy.select(
    context({
      workers: [f.a, f.b, f.c],
      load,
      inputTokens: INPUT,
      prefix: signal(10, [
        [f.a, 9],
        [f.b, 6],
      ]),
    }),
  );
  return { f, outcome: flat(outcome) };
}

describe('--queue-gate slo: an owner leaves when its predicted TTFT misses the goal and another engine’s would not', () => {
  it.each([
    // name, pending a/b/c, cold, engine-queued a/b/c, worker, decision, rejected
    ['nothing ahead: a 110 ms, the deepest owner keeps it', [0, 0, 0], [], undefined, 'a', 'cache_hit', []],
    ['a 2,110 ms > 2 s, b 410 ms: the shallower owner, a partial diversion', [20_000, 0, 0], [], undefined, 'b', 'cache_hit', ['a']],
    ['a 2,110, b 2,410: c, 1,010 ms for the whole prompt', [20_000, 20_000, 0], [], undefined, 'c', 'cache_worker_queued', ['a', 'b']],
    [
      'a 2,110, b 2,410, c 3,010: nobody meets it, affinity is kept',
      [20_000, 20_000, 20_000],
      [],
      undefined,
      'a',
      'all_queued',
      ['a', 'b'],
    ],
    ['a 1,999 ms (1,889 ahead + 110) is just within it; b, 2,410, leaves', [18_890, 20_000, 0], [], undefined, 'a', 'cache_hit', ['b']],
    ['a not yet learnt: cold start keeps plain cache_aware', [90_000, 0, 0], ['a'], undefined, 'a', 'cache_hit', []],
    ['a misses, b not yet learnt: b counts as meeting', [20_000, 90_000, 0], ['b'], undefined, 'b', 'cache_hit', ['a']],
    [
      'a and b miss, c not yet learnt: nothing known either way, plain cache_aware',
      [20_000, 20_000, 0],
      ['c'],
      undefined,
      'a',
      'cache_hit',
      [],
    ],
    ['the engine’s own queue counts where it is longer than the router’s pending', [0, 0, 0], [], [20_000, 0, 0], 'b', 'cache_hit', ['a']],
    ['the larger of the two counts, not their sum', [15_000, 0, 0], [], [15_000, 0, 0], 'a', 'cache_hit', []],
  ] as const)('%s', (_name, pending, cold, queued, want, decision, rejected) => {
    const { f, outcome } = select(pending, cold, queued);
    const by = (k: string): PolicyWorker => f[k as keyof Fleet];
    expect(outcome.worker).toBe(by(want));
    expect(outcome.decision).toBe(decision);
    expect(outcome.gateRejected).toEqual(rejected.map(by));
  });

  it('reads as mode slo, on with a goal, no limit: the rule says the goal', () => {
    const gate = queueGate({ queueGate: 'slo', ttftSloMs: 1500, workerQueueLimit: null, saturationQueueFloor: null });
    expect([gate.mode, gate.on, gate.limit, gate.tokenLimit, gate.sloMs, gate.rule()]).toEqual([
      'slo',
      true,
      null,
      null,
      1500,
      "predicted TTFT > 1,500 ms while another engine's is not",
    ]);
    // No standing rule: the pool's counters count nobody queued, whatever the engine says.
    expect(gate.isQueued(1000, 10_000_000)).toBe(false);
  });
});

describe('--admission slo: admit, hold or shed', () => {
  const load = snapshot([]);
  it.each([
    // name, goal, waited, tokens, pending, learnt, verdict
    ['not yet learnt: admitted', 1000, 0, 100, 90_000, false, 'admit'],
    ['predicted 510 ms of 1 s: admitted', 1000, 0, 1000, 4_000, true, 'admit'],
    ['held 400 ms, predicted 510: 910 ≤ 1,000, admitted', 1000, 400, 1000, 4_000, true, 'admit'],
    ['predicted 1,110 ms, 110 with nothing ahead: held', 1000, 0, 1000, 10_000, true, 'hold'],
    ['held 850 ms, 110 with nothing ahead would still do: held', 1000, 850, 1000, 10_000, true, 'hold'],
    ['held 900 ms, 110 with nothing ahead is too late: shed', 1000, 900, 1000, 10_000, true, 'shed'],
    ['20,000 tokens take 2,010 ms alone: shed at once', 1000, 0, 20_000, 0, true, 'shed'],
  ] as const)('%s', (_name, goal, waited, tokens, pending, learnt, verdict) => {
    expect(sloAdmission(goal, waited, engine('x', pending, learnt), tokens, load)).toBe(verdict);
  });

  it.each([
    ['nothing ahead: 1 s, the least', 0, 1],
    ['2 s of prefill ahead: 2 s', 20_000, 2],
    ['2.05 s ahead: rounded up to 3 s', 20_500, 3],
    ['an hour ahead: a minute, the most', 36_000_000, 60],
  ] as const)('Retry-After, %s', (_name, pending, seconds) => {
    expect(sloRetryAfterS(engine('x', pending), 1000, load)).toBe(seconds);
  });
});
