/**
 * Candidate building (docs/routing.md §Candidates).
 */
import { describe, expect, it } from 'vitest';
import {
  buildCacheCandidates,
  candidateLimit,
  compareSeedOrder,
  type CacheCandidate,
} from '../../src/router/policies/cache-aware/candidates.js';
import { cacheAwareConfig, DEFAULT_CACHE_AWARE_CONFIG } from '../../src/router/policies/cache-aware/config.js';
import { lookupOver } from '../../src/router/policies/cache-aware/pressure.js';
import type { PolicyWorker, PrefixMatch } from '../../src/router/policies/types.js';
import { EMPTY_LOAD, poolOf, type Row, seeded, signal, snapshot, worker } from './fixture.js';

const ROOM = 1_000_000;
const loose = cacheAwareConfig({ cacheAffinityMinMatchedTokens: undefined });

function build(
  workers: readonly PolicyWorker[],
  matches: ReadonlyArray<readonly [PolicyWorker, number]>,
  opts: { queryBlocks?: number; inputTokens?: number; config?: typeof loose; load?: ReturnType<typeof snapshot> } = {},
) {
  const load = opts.load ?? EMPTY_LOAD;
  return buildCacheCandidates(
    {
      pool: poolOf(workers, load),
      load,
      inputTokens: opts.inputTokens ?? 1000,
      prefix: signal(opts.queryBlocks ?? 10, matches),
    },
    opts.config ?? loose,
  );
}

describe('candidate limit', () => {
  it.each([
    [0, 0],
    [1, 1],
    [8, 8],
    [20, 8],
    // 0.05 × 60 is 3.0000000000000004 in f64; its ceiling 4 still loses to the minimum 8.
    [60, 8],
    [200, 10],
    [201, 11],
    [1000, 32],
  ])('a pool of %i keeps at most %i with the defaults', (n, want) => {
    expect(candidateLimit(n, DEFAULT_CACHE_AWARE_CONFIG)).toBe(want);
  });
});

describe('buildCacheCandidates', () => {
  it('needs a pool, a signal with matches and query blocks, and a known input size', () => {
    const a = worker('a');
    expect(build([], [[a, 5]])).toBeUndefined();
    expect(build([a], [[a, 5]], { queryBlocks: 0 })).toBeUndefined();
    expect(build([a], [])).toBeUndefined();
    expect(build([a], [[a, 5]], { inputTokens: Number.NaN })).toBeUndefined();
    expect(
      buildCacheCandidates({ pool: poolOf([a], EMPTY_LOAD), load: EMPTY_LOAD, inputTokens: 1000, prefix: undefined }, loose),
    ).toBeUndefined();
    expect(build([a], [[a, 5]])?.candidates).toHaveLength(1);
  });

  it('caps matched blocks at the query and derives tokens by floor', () => {
    const a = worker('a');
    const b = worker('b');
    const p = build(
      [a, b],
      [
        [a, 15],
        [b, 3],
      ],
      { inputTokens: 999 },
    );
    expect(p?.candidates).toEqual([
      { worker: a, matchedPrefixBlocks: 10, matchedPrefixTokens: 999, uncachedTokens: 0 },
      { worker: b, matchedPrefixBlocks: 3, matchedPrefixTokens: 299, uncachedTokens: 700 },
    ]);
  });

  it('skips zero-block matches and keeps the first of duplicate workers', () => {
    const a = worker('a');
    const b = worker('b');
    const p = build(
      [a, b],
      [
        [a, 0],
        [b, 2],
        [a, 4],
        [b, 9],
      ],
    );
    expect(p?.candidates.map((c) => [c.worker, c.matchedPrefixBlocks])).toEqual([
      [a, 4],
      [b, 2],
    ]);
  });

  it('applies the cache gate: minimum matched tokens and the optional ratio', () => {
    const a = worker('a');
    const b = worker('b');
    const matches = [
      [a, 9],
      [b, 2],
    ] as const;
    // 9/10 of 2000 = 1800 ≥ 1024; 2/10 = 400 < 1024.
    expect(build([a, b], matches, { inputTokens: 2000, config: DEFAULT_CACHE_AWARE_CONFIG })?.candidates.map((c) => c.worker)).toEqual([a]);
    expect(build([a, b], matches, { inputTokens: 1000, config: DEFAULT_CACHE_AWARE_CONFIG })).toBeUndefined();
    const ratio = cacheAwareConfig({ cacheAffinityMinMatchedTokens: undefined, cacheAffinityMinMatchRatio: 0.5 });
    expect(build([a, b], matches, { config: ratio })?.candidates.map((c) => c.worker)).toEqual([a]);
    // A ratio cannot be judged on an empty input.
    expect(build([a, b], matches, { config: ratio, inputTokens: 0 })).toBeUndefined();
  });

  it('orders by matched tokens, then pressure over all candidates, then id, and keeps the limit', () => {
    const calmBusyLocal = worker('a-calm', 5);
    const busyIdleLocal = worker('b-busy', 0);
    const unsampled = worker('c-unsampled', 3);
    const deep = worker('z-deep', 9);
    const load = snapshot([
      [calmBusyLocal, 0, 0, 0, ROOM],
      [busyIdleLocal, 0, 9, 0, ROOM],
      [deep, 0, 9, 0, ROOM],
    ]);
    const all = [calmBusyLocal, busyIdleLocal, unsampled, deep];
    const equalDepth: Array<readonly [PolicyWorker, number]> = [
      [calmBusyLocal, 5],
      [unsampled, 5],
      [busyIdleLocal, 5],
      [deep, 8],
    ];
    // One candidate without native data drops the whole set to router-local in-flight counts.
    const mixed = build(all, equalDepth, { load });
    expect(mixed?.candidates.map((c) => c.worker)).toEqual([deep, busyIdleLocal, unsampled, calmBusyLocal]);
    // Without it, engine pressure ranks the equal-depth owners.
    const engine = build(
      all,
      equalDepth.filter(([w]) => w !== unsampled),
      { load },
    );
    expect(engine?.candidates.map((c) => c.worker)).toEqual([deep, calmBusyLocal, busyIdleLocal]);
    // Limit 2 keeps the first two in seed order.
    const limited = build(all, equalDepth, {
      load,
      config: cacheAwareConfig({ cacheAffinityMinMatchedTokens: undefined, cacheCandidateMinWorkers: 2, cacheCandidateMaxWorkers: 2 }),
    });
    expect(limited?.candidates.map((c) => c.worker)).toEqual([deep, busyIdleLocal]);
  });

  it('bounded selection equals sorting every candidate and taking the first limit', () => {
    const rnd = seeded(99);
    for (let run = 0; run < 100; run++) {
      const n = 1 + Math.floor(rnd() * 40);
      const workers = Array.from({ length: n }, (_, i) => worker(`s${run}-${String(i).padStart(2, '0')}`, Math.floor(rnd() * 4)));
      const rows: Row[] = workers.filter(() => rnd() < 0.9).map((w) => [w, 0, Math.floor(rnd() * 4), 0, ROOM]);
      const load = snapshot(rows);
      const matches: PrefixMatch[] = workers.filter(() => rnd() < 0.7).map((w) => ({ worker: w, blocks: 1 + Math.floor(rnd() * 4) }));
      if (matches.length === 0) continue;
      const config = cacheAwareConfig({ cacheAffinityMinMatchedTokens: undefined, cacheCandidateMinWorkers: 1 + Math.floor(rnd() * 6) });
      const got = buildCacheCandidates(
        { pool: poolOf(workers, load), load, inputTokens: 400, prefix: { queryBlocks: 4, matches } },
        config,
      );
      const all: CacheCandidate[] = matches.map((m) => ({
        worker: m.worker,
        matchedPrefixBlocks: m.blocks,
        matchedPrefixTokens: m.blocks * 100,
        uncachedTokens: 400 - m.blocks * 100,
      }));
      const lookup = lookupOver(load, all, (c) => c.worker);
      const want = [...all].sort((x, y) => compareSeedOrder(lookup, x, y)).slice(0, candidateLimit(n, config));
      expect(got?.candidates).toEqual(want);
    }
  });
});
