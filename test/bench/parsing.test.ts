import { describe, expect, it } from 'vitest';
import { parseBurst } from '../../src/bench/burst.js';
import { ConfigurationError, buildConfigurations, parseSweep } from '../../src/bench/configurations.js';
import { formatDuration, parseDuration } from '../../src/bench/duration.js';
import { splitArgs } from '../../src/bench/split-args.js';

describe('parseDuration', () => {
  it.each([
    ['60s', 60_000],
    ['2m', 120_000],
    ['500ms', 500],
    ['1.5m', 90_000],
    ['30', 30_000],
    ['0.25', 250],
    ['1h', 3_600_000],
    [' 5S ', 5000],
  ])('%j is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', 'abc', '5 minutes', '-1s', '1d', 's'])('rejects %j', (text) => expect(parseDuration(text)).toBeUndefined());

  it('accepts a number of seconds', () => expect(parseDuration(2)).toBe(2000));

  it('formats compactly', () => {
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(30_000)).toBe('30s');
    expect(formatDuration(120_000)).toBe('2m');
    expect(formatDuration(90_000)).toBe('1m30s');
  });
});

describe('parseBurst', () => {
  it('reads FACTORxSECONDS/PERIOD', () => {
    expect(parseBurst('3x3s/15s')).toEqual({ factor: 3, seconds: 3, everySeconds: 15 });
    expect(parseBurst('2.5x5/60')).toEqual({ factor: 2.5, seconds: 5, everySeconds: 60 });
    expect(parseBurst('off')).toEqual({ factor: 1, seconds: 0, everySeconds: 0 });
  });

  it.each(['3x', '3x20s/10s', 'x3s/15s', '3*3/15', '0x1/2'])('rejects %j', (t) => expect(parseBurst(t)).toBeUndefined());
});

describe('splitArgs', () => {
  it('splits like a shell, honouring quotes and backslashes', () => {
    expect(splitArgs('--policy cache_aware  --worker-queue-limit 6')).toEqual(['--policy', 'cache_aware', '--worker-queue-limit', '6']);
    expect(splitArgs(`--model-id 'my model' --admin-token "a \\"b\\""`)).toEqual(['--model-id', 'my model', '--admin-token', 'a "b"']);
    expect(splitArgs('a\\ b ""')).toEqual(['a b', '']);
    expect(splitArgs('   ')).toEqual([]);
  });

  it('refuses an unterminated quote', () => expect(() => splitArgs('--model-id "x')).toThrow(/unterminated/));
});

describe('buildConfigurations', () => {
  it('lists --compare strings first, lettered, with (defaults) for an empty one', () => {
    const c = buildConfigurations(['--policy round_robin', ''], [], '');
    expect(c).toEqual([
      { letter: 'A', label: '--policy round_robin', args: ['--policy', 'round_robin'] },
      { letter: 'B', label: '(defaults)', args: [] },
    ]);
  });

  it('expands a sweep, with off leaving the flag out, after the --compare configurations', () => {
    const c = buildConfigurations(['--policy round_robin'], ['worker-queue-limit=off,2,6'], '');
    expect(c.map((x) => x.args)).toEqual([['--policy', 'round_robin'], [], ['--worker-queue-limit', '2'], ['--worker-queue-limit', '6']]);
  });

  it('multiplies several sweeps and prefixes --router-args everywhere', () => {
    const c = buildConfigurations([], ['worker-queue-limit=4,6', '--saturation-queue-floor=1,2'], '--load-poll-interval-ms 100');
    expect(c.map((x) => x.label)).toEqual([
      '--load-poll-interval-ms 100 --worker-queue-limit 4 --saturation-queue-floor 1',
      '--load-poll-interval-ms 100 --worker-queue-limit 4 --saturation-queue-floor 2',
      '--load-poll-interval-ms 100 --worker-queue-limit 6 --saturation-queue-floor 1',
      '--load-poll-interval-ms 100 --worker-queue-limit 6 --saturation-queue-floor 2',
    ]);
  });

  it('refuses the flags the benchmark sets itself', () => {
    expect(() => buildConfigurations(['--worker-urls http://x:1'], [], '')).toThrow(ConfigurationError);
    expect(() => buildConfigurations(['--port=9'], [], '')).toThrow(/--port is set by the benchmark/);
    expect(() => buildConfigurations([], ['port=1,2'], '')).toThrow(/cannot vary --port/);
  });

  it('refuses a malformed sweep', () => {
    expect(() => parseSweep('worker-queue-limit')).toThrow(/FLAG=V1,V2/);
    expect(() => parseSweep('=1,2')).toThrow(ConfigurationError);
    expect(parseSweep('--min-load-choices=1, 2 ,8')).toEqual({ flag: '--min-load-choices', values: ['1', '2', '8'] });
  });

  it("a configuration that starts with a peer router's name is that router with its own flags, in its place; --router-args is routerctl's", () => {
    const c = buildConfigurations(
      ['', 'smg --disable-worker-overload-protection', 'vllm-router', '--worker-queue-limit 6'],
      [],
      '--policy cache_aware',
    );
    expect(c).toEqual([
      { letter: 'A', label: '--policy cache_aware', args: ['--policy', 'cache_aware'] },
      { letter: 'B', label: 'smg --disable-worker-overload-protection', args: ['--disable-worker-overload-protection'], peer: 'smg' },
      { letter: 'C', label: 'vllm-router', args: [], peer: 'vllm-router' },
      { letter: 'D', label: '--policy cache_aware --worker-queue-limit 6', args: ['--policy', 'cache_aware', '--worker-queue-limit', '6'] },
    ]);
    expect(() => buildConfigurations(['smg --port 9'], [], '')).toThrow(/--port is set by the benchmark/);
    expect(() => buildConfigurations(['smg --worker-urls http://x:1'], [], '')).toThrow(ConfigurationError);
    // Not a peer's name: serve's flags, which check-config then judges.
    expect(buildConfigurations(['sglang-router'], [], '')[0]!.peer).toBeUndefined();
  });

  it('quotes labels that need it, so they can be pasted back', () => {
    expect(buildConfigurations(["--model-id 'a b'"], [], '')[0]!.label).toBe("--model-id 'a b'");
  });
});
