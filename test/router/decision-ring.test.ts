import { describe, expect, it } from 'vitest';
import { UsageCountScanner, DecisionRing, MAX_CANDIDATES, ownerSummary } from '../../src/router/state/decisions/index.js';
import type { DecisionInput } from '../../src/router/state/decisions/index.js';

const input = (id: string, selected = 'http://a'): Omit<DecisionInput, 'selectedBlocks' | 'best' | 'bestBlocks'> => ({
  id,
  atMs: 1_700_000_000_000,
  policy: 'cache_aware',
  decision: 'cache_hit',
  reason: 'cache_affinity',
  inputTokens: 100,
  queryBlocks: 10,
  selected,
  gateRejected: 0,
  admissionRejected: 0,
  fleetAllQueued: false,
  divertedBlocks: 0,
  partialDiversion: false,
  gateRule: null,
  predictedTtftMs: -1,
});
const owner = (id: string, blocks: number) => ({ worker: { id }, blocks });
const admitted = () => ({ waiting: 0, verdict: 'admitted' as const });
/** Record as the recorder does: the owners' summary (ownerSummary) goes with the input. */
const record = (ring: DecisionRing, d: ReturnType<typeof input>, owners: ReadonlyArray<ReturnType<typeof owner>> = []): number =>
  ring.record({ ...d, ...ownerSummary(owners, d.selected) }, owners, admitted);

describe('DecisionRing (docs/decisions.md §Decision record)', () => {
  it('keeps the deepest owners, deepest first, and counts the rest; the selected worker wins a tie for best', () => {
    const ring = new DecisionRing(4);
    const owners = [owner('http://c', 3), ...Array.from({ length: 10 }, (_, i) => owner(`http://x${i}`, i + 1)), owner('http://a', 10)];
    record(ring, input('r1'), owners);
    const [d] = ring.query();
    expect(d!.candidates.map((c) => c.matched_blocks)).toEqual([10, 10, 9, 8, 7, 6, 5, 4].slice(0, MAX_CANDIDATES));
    expect(d!.more_candidates).toBe(owners.length - MAX_CANDIDATES);
    expect(d).toMatchObject({ worker: 'http://a', matched_blocks: 10, best_worker: 'http://a', best_matched_blocks: 10 });
  });

  it.each([
    ['no owners', [], { matched_blocks: 0, best_worker: null, best_matched_blocks: 0 }],
    ['the selected one is not an owner', [owner('http://b', 4)], { matched_blocks: 0, best_worker: 'http://b', best_matched_blocks: 4 }],
    [
      'a deeper owner than the selected',
      [owner('http://a', 2), owner('http://b', 7)],
      { matched_blocks: 2, best_worker: 'http://b', best_matched_blocks: 7 },
    ],
  ] as const)('%s', (_name, owners, expected) => {
    const ring = new DecisionRing(2);
    record(ring, input('r'), owners);
    expect(ring.query()[0]).toMatchObject(expected);
  });

  it('overwrites the oldest, and a completion for an overwritten record does nothing', () => {
    const ring = new DecisionRing(3);
    const seqs = ['r1', 'r2', 'r3', 'r4'].map((id) => record(ring, input(id)));
    expect(ring.query().map((d) => d.request_id)).toEqual(['r2', 'r3', 'r4']);
    ring.complete(seqs[0]!, 200, 5, 1, 2);
    ring.complete(seqs[3]!, 200, 64, 12.34, 56.78);
    ring.retried(seqs[3]!, 'http://b');
    expect(ring.query({ requestId: 'r4' })[0]).toMatchObject({
      status: 200,
      cached_tokens: 64,
      ttft_ms: 12.3,
      duration_ms: 56.8,
      retried_to: 'http://b',
    });
    expect(ring.query().every((d) => d.request_id !== 'r1')).toBe(true);
    expect(ring.total).toBe(4);
  });

  it('filters: since, worker (selected or retried to), decision, limit (the newest)', () => {
    const ring = new DecisionRing(10);
    record(ring, input('r1', 'http://a'));
    const s2 = record(ring, { ...input('r2', 'http://b'), decision: 'cache_miss' });
    record(ring, input('r3', 'http://a'));
    ring.retried(s2, 'http://a');
    expect(ring.query({ since: 1 }).map((d) => d.request_id)).toEqual(['r2', 'r3']);
    expect(ring.query({ worker: 'http://b' }).map((d) => d.request_id)).toEqual(['r2']);
    expect(ring.query({ worker: 'http://a' }).map((d) => d.request_id)).toEqual(['r1', 'r2', 'r3']);
    expect(ring.query({ decision: 'cache_miss' }).map((d) => d.request_id)).toEqual(['r2']);
    expect(ring.query({ limit: 2 }).map((d) => d.request_id)).toEqual(['r2', 'r3']);
  });

  it('a ring of 0 records nothing and costs nothing', () => {
    const ring = new DecisionRing(0);
    expect(record(ring, input('r'))).toBe(0);
    expect(ring.query()).toEqual([]);
    expect(ring.memoryBytes).toBe(0);
  });
});

describe('UsageCountScanner', () => {
  const body = (n: number) => `{"usage":{"prompt_tokens":900,"prompt_tokens_details":{"cached_tokens": ${n}},"completion_tokens":2}}`;
  it.each([
    ['one chunk', [body(768)], 768],
    ['no field', ['{"usage":{"prompt_tokens":9}}'], -1],
    ['the last one wins (a stream)', ['data: {"cached_tokens":16}\n\n', `data: ${body(512)}\n\n`], 512],
  ])('%s', (_name, chunks, value) => {
    const s = new UsageCountScanner();
    for (const c of chunks) s.push(Buffer.from(c));
    expect(s.value).toBe(value);
  });

  it('finds the key and the number wherever the chunks cut them', () => {
    const text = body(12345);
    for (let cut = 1; cut < text.length; cut++) {
      const s = new UsageCountScanner();
      s.push(Buffer.from(text.slice(0, cut)));
      s.push(Buffer.from(text.slice(cut)));
      expect(s.value, `cut at ${cut}`).toBe(12345);
    }
  });
});
