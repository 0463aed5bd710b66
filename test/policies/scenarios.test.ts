/**
 * The end-to-end scenarios (limit L = 4) of docs/routing.md §Scenario table, as one
 * table through CacheAwarePolicy.select. Inputs are 100 000 tokens over 10 query
 * blocks, so every owner with ≥ 2 blocks clears the default 1024-token cache gate.
 */
import { describe, expect, it } from 'vitest';
import { CacheAwarePolicy } from '../../src/router/policies/cache-aware/cache-aware-policy.js';
import type { CacheAwareConfig } from '../../src/router/policies/cache-aware/config.js';
import type { PolicyWorker, SelectionContext } from '../../src/router/policies/types.js';
import { context, flat, type GateSettings, policyConfig, type Row, seeded, signal, snapshot, worker } from './fixture.js';

const L = 4;
const INPUT = 100_000;
const ROOM = 10_000_000;
const FULL = 1_000;

interface Scenario {
  readonly name: string;
  readonly build: () => {
    readonly config: Partial<CacheAwareConfig> & GateSettings;
    readonly ctx: SelectionContext;
    /** The worker the scenario must land on, or one of several. */
    readonly want?: PolicyWorker | readonly PolicyWorker[];
    readonly gateRejected?: readonly PolicyWorker[];
  };
  readonly outcome: Record<string, unknown>;
  readonly absent?: readonly string[];
}

/** (running, waiting, used, capacity) */
type Sample = readonly [number, number, number, number];

/** Owners a (deep, 9 blocks) and b (6 blocks) plus non-owner c; an omitted sample means unsampled. */
function fleet(a?: Sample, b?: Sample, c?: Sample) {
  const wa = worker('a');
  const wb = worker('b');
  const wc = worker('c');
  const rows: Row[] = [];
  if (a) rows.push([wa, ...a]);
  if (b) rows.push([wb, ...b]);
  if (c) rows.push([wc, ...c]);
  return {
    a: wa,
    b: wb,
    c: wc,
    load: snapshot(rows),
    prefix: signal(10, [
      [wa, 9],
      [wb, 6],
    ]),
  };
}

const scenarios: Scenario[] = [
  {
    name: '1: deepest owner queued, another owner below L → the other owner, a partial diversion',
    build: () => {
      const f = fleet([0, 5, 0, ROOM], [0, 1, 0, ROOM], [0, 0, 0, ROOM]);
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT, prefix: f.prefix }),
        want: f.b,
        gateRejected: [f.a],
      };
    },
    outcome: { ok: true, decision: 'cache_hit', reason: 'cache_candidate', partialDiversion: true },
    absent: ['divertedOverlapBlocks'],
  },
  {
    name: '2: every owner queued, a non-owner below L → diversion to it',
    build: () => {
      const f = fleet([0, 5, 0, ROOM], [0, 7, 0, ROOM], [0, 1, 0, ROOM]);
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT, prefix: f.prefix }),
        want: f.c,
        gateRejected: [f.a, f.b],
      };
    },
    outcome: { ok: true, decision: 'cache_worker_queued', divertedOverlapBlocks: 9, reason: 'no_cache_candidate' },
  },
  {
    name: '2: every owner queued, a non-owner unsampled → diversion to it (unknown is not full)',
    build: () => {
      const f = fleet([0, 5, 0, ROOM], [0, 7, 0, ROOM]);
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT, prefix: f.prefix }),
        want: f.c,
      };
    },
    outcome: { ok: true, decision: 'cache_worker_queued', divertedOverlapBlocks: 9 },
  },
  {
    name: '3: every fleet worker sampled and queued, no floor → second tier keeps the deepest owner',
    build: () => {
      const f = fleet([0, 5, 0, ROOM], [0, 7, 0, ROOM], [0, 4, 0, ROOM]);
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT, prefix: f.prefix }),
        want: f.a,
      };
    },
    outcome: { ok: true, decision: 'all_queued', reason: 'cache_candidate', partialDiversion: false },
    absent: ['divertedOverlapBlocks'],
  },
  {
    name: '4: as 3 with KV-exhausted owners → capacity fallback, still all_queued (2,2,true)',
    build: () => {
      const f = fleet([0, 5, FULL, FULL], [0, 7, FULL, FULL], [0, 4, FULL, FULL]);
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT, prefix: f.prefix }),
        want: [f.a, f.b, f.c],
      };
    },
    outcome: {
      ok: true,
      decision: 'all_queued',
      reason: 'no_cache_candidate_capacity_fallback_power_of_two',
      audit: { queueGateRejected: 2, admissionEvaluated: 2, fleetAllQueued: true },
    },
    absent: ['divertedOverlapBlocks'],
  },
  {
    name: '5: floor set, nobody below it → pin the least-pressured owner',
    build: () => {
      const f = fleet([0, 9, 0, ROOM], [0, 5, 0, ROOM], [0, 3, 0, ROOM]);
      return {
        config: { workerQueueLimit: L, saturationQueueFloor: 2 },
        ctx: context({
          workers: [f.a, f.b, f.c],
          load: f.load,
          gate: { limit: L, floor: 2 },
          inputTokens: INPUT,
          prefix: f.prefix,
        }),
        want: f.b,
      };
    },
    outcome: { ok: true, decision: 'all_queued', reason: 'saturation_pin', backup: undefined },
    absent: ['divertedOverlapBlocks'],
  },
  {
    name: '6: floor set, a fleet worker below it → no pin, diversion',
    build: () => {
      const f = fleet([0, 9, 0, ROOM], [0, 5, 0, ROOM], [0, 1, 0, ROOM]);
      return {
        config: { workerQueueLimit: L, saturationQueueFloor: 2 },
        ctx: context({
          workers: [f.a, f.b, f.c],
          load: f.load,
          gate: { limit: L, floor: 2 },
          inputTokens: INPUT,
          prefix: f.prefix,
        }),
        want: f.c,
      };
    },
    outcome: { ok: true, decision: 'cache_worker_queued', divertedOverlapBlocks: 9 },
  },
  {
    name: '6 (edge): floor set, none below it, not all queued, every gated owner KV-full → cache_worker_queued',
    build: () => {
      const f = fleet([0, 9, FULL, FULL], [0, 5, FULL, FULL], [0, 3, 0, ROOM]);
      return {
        config: { workerQueueLimit: L, saturationQueueFloor: 2 },
        ctx: context({
          workers: [f.a, f.b, f.c],
          load: f.load,
          gate: { limit: L, floor: 2 },
          inputTokens: INPUT,
          prefix: f.prefix,
        }),
        want: f.c,
      };
    },
    outcome: { ok: true, decision: 'cache_worker_queued', divertedOverlapBlocks: 9 },
  },
  {
    name: '7: no worker has a fresh sample → the gate admits everyone and the warning is due',
    build: () => {
      const f = fleet();
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT, prefix: f.prefix }),
        want: f.a,
        gateRejected: [],
      };
    },
    outcome: { ok: true, decision: 'cache_hit', reason: 'cache_candidate', inertWarning: true, partialDiversion: false },
  },
  {
    name: '7: no fresh sample and a tree miss → cache_miss (the warning lives on the candidate path)',
    build: () => {
      const f = fleet();
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT }),
        want: [f.a, f.b, f.c],
      };
    },
    outcome: { ok: true, decision: 'cache_miss', reason: 'no_cache_candidate' },
    absent: ['inertWarning', 'audit', 'gateRejected'],
  },
  {
    name: '8: tree miss on a saturated fleet → cache_miss',
    build: () => {
      const f = fleet([0, 5, 0, ROOM], [0, 7, 0, ROOM], [0, 4, 0, ROOM]);
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT }),
        want: [f.a, f.b, f.c],
      };
    },
    outcome: { ok: true, decision: 'cache_miss' },
    absent: ['divertedOverlapBlocks'],
  },
  {
    name: '8: no candidate clears min-matched-tokens on a saturated fleet → cache_miss',
    build: () => {
      const f = fleet([0, 5, 0, ROOM], [0, 7, 0, ROOM], [0, 4, 0, ROOM]);
      return {
        config: { workerQueueLimit: L },
        // 1 block of 10 over 5000 tokens = 500 matched tokens < 1024.
        ctx: context({
          workers: [f.a, f.b, f.c],
          load: f.load,
          gate: { limit: L },
          inputTokens: 5000,
          prefix: signal(10, [[f.a, 1]]),
        }),
        want: [f.a, f.b, f.c],
      };
    },
    outcome: { ok: true, decision: 'cache_miss' },
    absent: ['audit'],
  },
  {
    name: '9: owners pass the gate but all fail KV capacity → cache_miss',
    build: () => {
      const f = fleet([0, 1, FULL, FULL], [0, 0, FULL, FULL], [0, 2, 0, ROOM]);
      return {
        config: { workerQueueLimit: L },
        ctx: context({ workers: [f.a, f.b, f.c], load: f.load, gate: { limit: L }, inputTokens: INPUT, prefix: f.prefix }),
        want: f.c,
        gateRejected: [],
      };
    },
    outcome: { ok: true, decision: 'cache_miss', audit: { queueGateRejected: 0, admissionEvaluated: 2, admissionRejected: 2 } },
    absent: ['divertedOverlapBlocks'],
  },
  {
    name: '10: ladder exhausted → failure, no decision',
    build: () => ({
      config: { workerQueueLimit: L },
      ctx: context({ workers: [], gate: { limit: L }, inputTokens: INPUT }),
    }),
    outcome: { ok: false, reason: 'proposal_empty' },
    absent: ['decision', 'divertedOverlapBlocks', 'worker'],
  },
];

describe('end-to-end scenarios (docs/routing.md §Scenario table)', () => {
  it.each(scenarios)('$name', ({ build, outcome, absent }) => {
    for (let seed = 0; seed < 8; seed++) {
      const { config, ctx, want, gateRejected } = build();
      const selected = new CacheAwarePolicy(policyConfig(config)).select({ ...ctx, random: seeded(seed) });
      const out = flat(selected);
      expect(out).toMatchObject(outcome);
      for (const key of absent ?? []) expect(out).not.toHaveProperty(key);
      if (want !== undefined) {
        const worker = selected.ok ? selected.worker : undefined;
        if (Array.isArray(want)) expect(want).toContain(worker);
        else expect(worker).toBe(want);
      }
      if (gateRejected !== undefined) expect(out.gateRejected).toEqual(gateRejected);
    }
  });
});
