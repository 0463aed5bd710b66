import { describe, expect, it } from 'vitest';
import type { AdminDecision } from '../../src/contract/index.js';
import { diagnose, formatDiagnosis } from '../../src/explain/index.js';
import { adminDecision } from '../helpers/admin-decision.js';

/** A completed record: 100 prompt tokens in 10 prefix blocks (10 tokens a block). */
const rec = adminDecision;
const hit = (worker: string, cached = 90) =>
  rec({ worker, matched_blocks: 9, best_worker: worker, best_matched_blocks: 9, cached_tokens: cached });
const tokensOf = (d: ReturnType<typeof diagnose>) => Object.fromEntries(d.ladder.map((s) => [s.step, s.tokens]));

describe('diagnose: where the prompt tokens went (docs/decisions.md §routerctl doctor)', () => {
  it('the ladder adds up: prompt − losses + reuse beyond the index = reported', () => {
    const d = diagnose([
      rec({ decision: 'cache_miss', cached_tokens: 0 }), // held by no one: 100
      hit('http://a:1'), // 90 of 100 held and reused; 10 not held
      rec({ decision: 'cache_worker_queued', worker: 'http://b:1', best_worker: 'http://a:1', best_matched_blocks: 8, cached_tokens: 0 }), // gate: 80
      rec({ worker: 'http://b:1', matched_blocks: 3, best_worker: 'http://a:1', best_matched_blocks: 6, cached_tokens: 30 }), // routing miss: 30
      rec({ worker: 'http://a:1', matched_blocks: 9, best_worker: 'http://a:1', best_matched_blocks: 9, cached_tokens: 50 }), // evicted: 40
      rec({ worker: 'http://a:1', matched_blocks: 2, best_worker: 'http://a:1', best_matched_blocks: 2, cached_tokens: 40 }), // reuse beyond: 20
    ]);
    expect(d.requests).toBe(6);
    expect(tokensOf(d)).toEqual({
      not_held: 100 + 10 + 20 + 40 + 10 + 80,
      gate_diversions: 80,
      routing_misses: 30,
      capacity: 40,
      stale_index: 0,
    });
    const losses = d.ladder.reduce((a, s) => a + s.tokens, 0);
    expect(d.promptTokens - losses + d.unexpectedReuse).toBe(d.reportedCached);
    expect(d.reportedCached).toBe(0 + 90 + 0 + 30 + 50 + 40);
  });

  it('leaves out records without a prefix key, unfinished, failed or without a cached-token report', () => {
    const d = diagnose([
      rec({ query_blocks: 0 }),
      rec({ status: null }),
      rec({ status: 503 }),
      rec({ cached_tokens: null }),
      hit('http://a:1'),
    ]);
    expect(d).toMatchObject({ requests: 1, skipped: 4 });
  });

  // The three causes by construction: each names its own dominant loss.
  it.each([
    [
      'a cold workload larger than the engines: prompts come back after they were evicted, on every worker',
      [
        ...Array.from({ length: 20 }, (_, i) => rec({ decision: 'cache_miss', worker: `http://w${i % 4}:1` })),
        ...Array.from({ length: 20 }, (_, i) =>
          rec({
            worker: `http://w${i % 4}:1`,
            matched_blocks: 9,
            best_worker: `http://w${i % 4}:1`,
            best_matched_blocks: 9,
            cached_tokens: 0,
          }),
        ),
      ],
      'not_held',
      /held by no worker when routed/,
    ],
    [
      'a gate set too low on a hot prefix',
      [
        hit('http://a:1'),
        ...Array.from({ length: 10 }, () =>
          rec({
            decision: 'cache_worker_queued',
            worker: 'http://b:1',
            best_worker: 'http://a:1',
            best_matched_blocks: 9,
            diverted_blocks: 9,
            cached_tokens: 0,
          }),
        ),
        hit('http://a:1'),
      ],
      'gate_diversions',
      /gate diversions cost .* \(10 requests sent away from their prefix owner\): raise --worker-queue-limit or add --saturation-queue-floor/,
    ],
    [
      'an index made stale by an engine restart: one worker reuses nothing it is credited with',
      [...Array.from({ length: 10 }, () => hit('http://b:1')), ...Array.from({ length: 10 }, () => hit('http://a:1', 0))],
      'stale_index',
      /the index was stale for a:1: it reused nothing/,
    ],
    [
      'engines evicting across the fleet (part of each prefix reused)',
      Array.from({ length: 12 }, (_, i) => hit(`http://w${i % 3}:1`, 30)),
      'capacity',
      /capacity cost .*evicted what the router.s index still credited them with/,
    ],
  ] as Array<[string, AdminDecision[], string, RegExp]>)('%s', (_name, records, dominant, finding) => {
    const d = diagnose(records);
    expect(d.dominant).toBe(dominant);
    expect(d.findings[0]!.cause).toBe(dominant);
    expect(d.findings[0]!.text).toMatch(finding);
    const text = formatDiagnosis(d).join('\n');
    expect(text).toMatch(/^doctor: \d+ requests analysed/);
    expect(text).toMatch(/= cached tokens reported/);
  });

  it('nothing to analyse is said in words', () => {
    expect(formatDiagnosis(diagnose([]))).toEqual([
      'doctor: 0 requests analysed',
      'nothing to analyse: no completed request with a prefix key and an engine cached-token report',
    ]);
  });
});
