import { describe, expect, it } from 'vitest';
import type { AdminDecision } from '../../src/contract/index.js';
import { decisionStory } from '../../src/explain/story.js';

/** The engine line of a request's story says what the router predicted beside what came (docs/routing.md §Learned prefill rate). */
describe('explain: the predicted TTFT beside the measured one', () => {
  const record = (predicted: number | null | undefined): AdminDecision =>
    ({
      seq: 1,
      request_id: 'r-1',
      at_ms: 0,
      policy: 'cache_aware',
      decision: 'cache_miss',
      reason: 'no_cache_candidate',
      input_tokens: 900,
      query_blocks: 0,
      worker: 'http://10.0.0.1:30000',
      matched_blocks: 0,
      best_worker: null,
      best_matched_blocks: 0,
      candidates: [],
      more_candidates: 0,
      gate_rejected: 0,
      admission_rejected: 0,
      fleet_all_queued: false,
      diverted_blocks: 0,
      partial_diversion: false,
      gate_rule: null,
      ...(predicted === undefined ? {} : { predicted_ttft_ms: predicted }),
      retried_to: null,
      status: 200,
      cached_tokens: 0,
      ttft_ms: 88.4,
      duration_ms: 120,
    }) as AdminDecision;
  const engine = (d: AdminDecision): string | undefined =>
    decisionStory(d, { workerQueueLimit: null, blockSize: 16 }).find((l) => l.startsWith('engine:'));

  it.each([
    {
      predicted: 84.2,
      line: 'engine:   status 200, reported 0 cached tokens, first byte after 88.4 ms (predicted 84.2 ms), done after 120 ms',
    },
    { predicted: null, line: 'engine:   status 200, reported 0 cached tokens, first byte after 88.4 ms, done after 120 ms' },
    { predicted: undefined, line: 'engine:   status 200, reported 0 cached tokens, first byte after 88.4 ms, done after 120 ms' },
  ])('predicted $predicted', ({ predicted, line }) => {
    expect(engine(record(predicted))).toBe(line);
  });
});
