import { describe, expect, it } from 'vitest';
import type { AdminDecision } from '../../src/contract/index.js';
import { decisionStory } from '../../src/explain/story.js';
import { adminDecision } from '../helpers/admin-decision.js';

/** The engine line of a request's story says what the router predicted beside what came (docs/routing.md §Learned prefill rate). */
describe('explain: the predicted TTFT beside the measured one', () => {
  const record = (predicted: number | null | undefined): AdminDecision => {
    const d = adminDecision({
      request_id: 'r-1',
      decision: 'cache_miss',
      reason: 'no_cache_candidate',
      input_tokens: 900,
      query_blocks: 0,
      worker: 'http://10.0.0.1:30000',
      ttft_ms: 88.4,
      duration_ms: 120,
      predicted_ttft_ms: predicted ?? null,
    });
    // An older router's record has no such field at all.
    if (predicted === undefined) delete (d as Partial<AdminDecision>).predicted_ttft_ms;
    return d;
  };
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
