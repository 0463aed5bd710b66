import { describe, expect, it } from 'vitest';
import { parseMooncakeTrace, selectTrace, traceDigest, tracePromptTokens } from '../../src/workload/index.js';

const line = (o: Record<string, unknown>): string => JSON.stringify(o);
const ok = (at: number, input: number, ids: number[], output = 8) =>
  line({ timestamp: at, input_length: input, output_length: output, hash_ids: ids });

describe('Mooncake traces (docs/bench.md §Traces)', () => {
  it('reads requests in file order; blank lines are not requests', () => {
    const { requests, problems } = parseMooncakeTrace([ok(0, 600, [1, 2]), '', ok(27, 512, [1])].join('\n'), 512);
    expect(problems).toEqual([]);
    expect(requests).toEqual([
      { atMs: 0, inputLength: 600, outputLength: 8, hashIds: [1, 2] },
      { atMs: 27, inputLength: 512, outputLength: 8, hashIds: [1] },
    ]);
  });

  it.each([
    ['not JSON', '{timestamp: 1', 'not JSON'],
    ['a list', '[1,2]', 'not a JSON object'],
    ['no timestamp', line({ input_length: 10, output_length: 1, hash_ids: [1] }), 'timestamp is missing, not a number ≥ 0'],
    [
      'a negative input',
      line({ timestamp: 0, input_length: -5, output_length: 1, hash_ids: [1] }),
      'input_length is -5, not a whole number ≥ 1',
    ],
    [
      'hash ids that are not numbers',
      line({ timestamp: 0, input_length: 10, output_length: 1, hash_ids: ['a'] }),
      'hash_ids is not a list of whole numbers',
    ],
    ['too few ids for the input', ok(0, 1025, [1, 2]), '2 hash_ids for 1025 input tokens; blocks of 512 need 3 (--trace-block-size?)'],
  ])('%s is reported with its line number', (_name, bad, reason) => {
    const { requests, problems } = parseMooncakeTrace([ok(0, 10, [1]), bad].join('\n'), 512);
    expect(requests).toHaveLength(1);
    expect(problems).toEqual([{ line: 2, reason }]);
  });

  it('selects a window, then a limit, re-timed from 0 and compressed', () => {
    const { requests } = parseMooncakeTrace([0, 1000, 2000, 3000, 4000].map((t) => ok(t, 10, [t])).join('\n'), 512);
    expect(selectTrace(requests, { fromMs: 1000, toMs: 4000, limit: 2, speedup: 2 }).map((r) => [r.atMs, r.hashIds[0]])).toEqual([
      [0, 1000],
      [500, 2000],
    ]);
  });

  it('equal ids give equal token blocks, so shared leading ids are a shared prefix; the last block is cut to the input', () => {
    const a = tracePromptTokens({ atMs: 0, inputLength: 40, outputLength: 1, hashIds: [7, 8, 9] }, 16);
    const b = tracePromptTokens({ atMs: 0, inputLength: 48, outputLength: 1, hashIds: [7, 8, 10] }, 16);
    expect(a).toHaveLength(40);
    expect(a.slice(0, 32)).toEqual(b.slice(0, 32));
    expect(a.slice(32, 40)).not.toEqual(b.slice(32, 40));
    expect(Math.min(...a)).toBeGreaterThanOrEqual(100);
  });

  it('the digest names the workload: same requests, same digest; any change, another', () => {
    const { requests } = parseMooncakeTrace([ok(0, 10, [1]), ok(5, 10, [2])].join('\n'), 512);
    expect(traceDigest(requests)).toBe(traceDigest([...requests]));
    expect(traceDigest(requests)).not.toBe(traceDigest([requests[0]!, { ...requests[1]!, outputLength: 9 }]));
  });
});
