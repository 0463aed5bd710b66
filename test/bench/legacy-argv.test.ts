import { describe, expect, it } from 'vitest';
import { parseChatSpec, parseGspSpec, rewriteLegacyBench } from '../../src/bench/flags/index.js';

describe('rewriteLegacyBench', () => {
  it.each([
    [['bench', '--url', 'U', '--json'], ['bench', 'run', '--url', 'U', '--json'], "'bench --url' is now 'bench run --url'"],
    [
      ['bench', '--compare', '', '--sweep', 'a=1'],
      ['bench', 'compare', '--compare', '', '--sweep', 'a=1'],
      "'bench --compare' is now 'bench compare'",
    ],
    [['bench', '--sweep', 'a=1,2'], ['bench', 'compare', '--sweep', 'a=1,2'], "'bench --sweep' is now 'bench compare --sweep'"],
    [
      ['bench', '--url', 'U', '--capture', 'f.jsonl', '--duration', '4s'],
      ['bench', 'capture', 'f.jsonl', '--url', 'U', '--duration', '4s'],
      "'bench --capture FILE' is now 'bench capture FILE'",
    ],
    [
      ['bench', '--capture=f.jsonl', '--url', 'U'],
      ['bench', 'capture', 'f.jsonl', '--url', 'U'],
      "'bench --capture FILE' is now 'bench capture FILE'",
    ],
    [
      ['bench', '--trace', 'T', '--clock', 'virtual'],
      ['bench', 'run', '--trace', 'T', '--clock', 'virtual'],
      "'bench --trace' is now 'bench run --trace'",
    ],
    [
      ['bench', '--trace', 'T', '--compare', ''],
      ['bench', 'compare', '--trace', 'T', '--compare', ''],
      "'bench --compare' is now 'bench compare'",
    ],
    [['bench', '--workload', 'gsp'], ['bench', 'run', '--workload', 'gsp'], "'bench --workload' is now 'bench run --workload'"],
  ])('%j → %j, in one line', (old, now, rename) => {
    const r = rewriteLegacyBench(old);
    expect(r.argv).toEqual(now);
    expect(r.notice).toBe(`routerctl: ${rename}; the old form goes in the next release`);
  });

  it('folds the chat and gsp knobs into --chat and --gsp, naming them in the same line', () => {
    const r = rewriteLegacyBench([
      'bench',
      '--url',
      'U',
      '--sessions',
      '64',
      '--burst=off',
      '--gsp-num-groups',
      '4',
      '--gsp-ordered',
      '--json',
    ]);
    expect(r.argv).toEqual([
      'bench',
      'run',
      '--url',
      'U',
      '--json',
      '--chat',
      'sessions=64,burst=off',
      '--gsp',
      'num-groups=4,ordered=true',
    ]);
    expect(r.notice).toBe(
      "routerctl: 'bench --url' is now 'bench run --url'; '--sessions 64 --burst off' is now '--chat sessions=64,burst=off'; " +
        "'--gsp-num-groups 4 --gsp-ordered' is now '--gsp num-groups=4,ordered=true'; the old forms go in the next release",
    );
    expect(r.notice).not.toMatch(/\n/);
  });

  it('leaves the new forms, other commands and configurations alone', () => {
    for (const argv of [
      ['bench', 'run', '--url', 'U'],
      ['bench', 'compare', '--policy round_robin', ''],
      ['bench'],
      ['bench', '--help'],
      ['sim', '--url', 'x'],
    ]) {
      expect(rewriteLegacyBench(argv)).toEqual({ argv, notice: undefined });
    }
  });
});

describe('workload specs', () => {
  it('--chat sets the named knobs over the defaults, a later key winning', () => {
    expect(parseChatSpec(['sessions=64,turns=2', 'turns=3'])).toMatchObject({ sessions: 64, turns: 3, families: 16, burst: '3x3s/15s' });
  });

  it('--gsp reads bench_serving names', () => {
    expect(parseGspSpec(['num-groups=4,group-distribution=zipf,zipf-alpha=1.2,ordered'])).toMatchObject({
      numGroups: 4,
      groupDistribution: 'zipf',
      zipfAlpha: 1.2,
      ordered: true,
      promptsPerGroup: 16,
    });
  });

  it.each([
    [() => parseChatSpec(['sesions=4']), /--chat has no key 'sesions'; did you mean 'sessions'\?/],
    [() => parseChatSpec(['sessions=0']), /--chat sessions must be a whole number of at least 1 \(got 0\)/],
    [() => parseGspSpec(['range-ratio=2']), /--gsp range-ratio takes a number in \(0, 1\]/],
    [() => parseGspSpec(['group-distribution=normal']), /--gsp group-distribution takes uniform or zipf/],
  ])('refuses a bad spec in one line (%#)', (parse, message) => expect(parse).toThrow(message));
});
