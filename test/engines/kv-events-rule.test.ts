import { describe, expect, it } from 'vitest';
import { kvEventsRuleFor, parseZmqEndpoint, pushEndpoint, pushInfoFromRule } from '../../src/engines/index.js';
import type { KvEventsRule } from '../../src/engines/index.js';
import { globMatches } from '../../src/engines/push/kv-events-rule.js';

const rule = (workers: string, endpoint: string | null = 'tcp://*:5557', more: Partial<KvEventsRule> = {}): KvEventsRule => ({
  workers,
  endpoint,
  replayEndpoint: null,
  topic: '',
  dpSize: 1,
  ...more,
});

describe('--kv-events entries (docs/configuration.md §KV event endpoints)', () => {
  it.each([
    ['tcp://*:5557', { host: null, port: 5557 }],
    ['tcp://0.0.0.0:1', { host: null, port: 1 }],
    ['tcp://[::]:5557', { host: null, port: 5557 }],
    ['tcp://10.0.0.5:5557', { host: '10.0.0.5', port: 5557 }],
    ['tcp://vllm-0.pods:5557', { host: 'vllm-0.pods', port: 5557 }],
    ['tcp://[fd00::5]:6000', { host: '[fd00::5]', port: 6000 }],
    ['tcp://*:0', /outside 1\.\.65535/],
    ['tcp://*:65536', /outside 1\.\.65535/],
    ['tcp://*', /not tcp:\/\/host:port/],
    ['http://10.0.0.5:5557', /not tcp:\/\/host:port/],
    ['ipc:///tmp/kv', /local socket/],
  ])('parseZmqEndpoint(%s)', (text, expected) => {
    const got = parseZmqEndpoint(text);
    if (expected instanceof RegExp) expect(got).toMatch(expected);
    else expect(got).toEqual(expected);
  });

  it.each([
    ['http://10.0.0.*:8000', 'http://10.0.0.5:8000', true],
    ['http://10.0.0.*:8000', 'http://10.0.1.5:8000', false],
    ['http://*', 'http://anything:1', true],
    ['http://a*b*c', 'http://abc', true],
    ['http://a*b*c', 'http://acb', false],
    ['http://*:8000', 'http://h:80001', false],
    ['http://exact:1', 'http://exact:1', true],
  ])('globMatches(%s, %s) = %s', (pattern, text, ok) => {
    expect(globMatches(pattern, text)).toBe(ok);
  });

  it('an exact URL wins over patterns; else the first pattern in the order written; trailing slashes do not count', () => {
    const rules = [
      rule('http://10.0.0.*', 'tcp://*:1'),
      rule('http://10.0.0.*:8000', 'tcp://*:2'),
      rule('http://10.0.0.5:8000/', 'tcp://*:3'),
    ];
    expect(kvEventsRuleFor(rules, 'http://10.0.0.5:8000')?.endpoint).toBe('tcp://*:3');
    expect(kvEventsRuleFor(rules, 'http://10.0.0.6:8000')?.endpoint).toBe('tcp://*:1');
    expect(kvEventsRuleFor(rules, 'http://10.1.0.6:8000')).toBeUndefined();
  });

  it('an entry gives the push facts discovery gives: the worker host for a wildcard, ranks from the port, the replay base', () => {
    const info = pushInfoFromRule(rule('http://h', 'tcp://*:5557', { replayEndpoint: 'tcp://*:5600', topic: 'kv', dpSize: 2 }))!;
    expect(info).toMatchObject({
      host: null,
      kvPortBase: 5557,
      kvTopic: 'kv',
      dpSize: 2,
      replayHost: null,
      replayPortBase: 5600,
      replayFrom: 'config',
      loadPortBase: null,
      blockSize: null,
    });
    expect(pushEndpoint('http://10.0.0.5:8000', info, info.kvPortBase, 1)).toBe('tcp://10.0.0.5:5558');
    const fixed = pushInfoFromRule(rule('http://h', 'tcp://10.9.9.9:5557'))!;
    expect(pushEndpoint('http://10.0.0.5:8000', fixed, fixed.kvPortBase, 0)).toBe('tcp://10.9.9.9:5557');
  });

  it('an entry naming only a replay endpoint gives no channels of its own: it amends what the engine advertises', () => {
    expect(pushInfoFromRule(rule('http://h', null, { replayEndpoint: 'tcp://*:5558' }))).toBeNull();
  });
});
