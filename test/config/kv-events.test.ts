import { beforeEach, afterEach, describe, expect, it } from 'vitest';
import { rcSandbox, resolveArgs } from './support.js';

/** `--kv-events` (docs/configuration.md §KV event endpoints): parse, value and cross-flag rules. */
const W = ['--worker-urls', 'http://10.0.0.5:8000', 'http://10.0.0.6:8000'];
const json = (v: unknown): string => JSON.stringify(v);

/** [case, extra flags, first problem (code, message fragment) or null, warnings expected] */
const table: Array<[string, string[], { code: string; message: RegExp } | null, string[]?]> = [
  ['an exact URL', ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*:5557' } })], null],
  [
    'a pattern, every field',
    [
      '--kv-events',
      json({ 'http://10.0.0.*:8000': { endpoint: 'tcp://*:5557', 'replay-endpoint': 'tcp://*:5559', topic: 'kv', 'dp-size': 2 } }),
    ],
    null,
  ],
  [
    "vLLM's own --kv-events-config, pasted",
    [
      '--kv-events',
      json({
        'http://10.0.0.*': {
          enable_kv_cache_events: true,
          publisher: 'zmq',
          endpoint: 'tcp://*:5557',
          replay_endpoint: 'tcp://*:5558',
          topic: 'kv-events',
          buffer_steps: 10000,
          hwm: 100000,
          max_queue_size: 100000,
        },
      }),
    ],
    null,
  ],
  ['not JSON', ['--kv-events', '{endpoint'], { code: 'RCTL_E_PARSE_INVALID_TYPE', message: /--kv-events: not JSON/ }],
  ['a list, not a mapping', ['--kv-events', '[1]'], { code: 'RCTL_E_PARSE_INVALID_TYPE', message: /expected a mapping from worker URL/ }],
  [
    'an entry that is a string',
    ['--kv-events', json({ 'http://a': 'tcp://*:1' })],
    { code: 'RCTL_E_PARSE_INVALID_TYPE', message: /'http:\/\/a': expected a mapping with an endpoint/ },
  ],
  [
    'no endpoint',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { topic: 'x' } })],
    {
      code: 'RCTL_E_PARSE_MISSING_VALUE',
      message: /needs an endpoint, e\.g\. "tcp:\/\/\*:5557", or a replay-endpoint alone for an engine that advertises its own/,
    },
  ],
  [
    'neither endpoint nor replay endpoint (a null replay)',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { replay_endpoint: null } })],
    { code: 'RCTL_E_PARSE_MISSING_VALUE', message: /needs an endpoint/ },
  ],
  [
    'a replay endpoint alone (for SGLang, which advertises the rest)',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { 'replay-endpoint': 'tcp://*:5558' } })],
    null,
  ],
  [
    "SGLang's --kv-events-config pasted for its replay endpoint",
    ['--kv-events', json({ 'http://10.0.0.*': { publisher: 'zmq', replay_endpoint: 'tcp://*:5558', buffer_steps: 10000 } })],
    null,
  ],
  [
    'a replay endpoint alone that is not tcp://host:port',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { 'replay-endpoint': 'ipc:///tmp/r' } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /replay-endpoint .*local socket/ },
  ],
  [
    'a replay endpoint alone whose ranks run past the last port',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { 'replay-endpoint': 'tcp://*:65535', 'dp-size': 2 } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /2 replay ranks from port 65535 run past 65535/ },
  ],
  [
    'a misspelt key',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*:1', 'replay-endpont': 'tcp://*:2' } })],
    { code: 'RCTL_E_PARSE_UNKNOWN_KEY', message: /unknown key replay-endpont .*did you mean replay-endpoint\?/ },
  ],
  [
    'dp-size as text',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*:1', 'dp-size': 'two' } })],
    { code: 'RCTL_E_PARSE_NOT_A_NUMBER', message: /dp-size: expected an integer/ },
  ],
  [
    'another publisher',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*:1', publisher: 'null' } })],
    { code: 'RCTL_E_PARSE_INVALID_CHOICE', message: /zmq publisher only/ },
  ],
  [
    'events turned off',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*:1', enable_kv_cache_events: false } })],
    { code: 'RCTL_E_PARSE_INVALID_TYPE', message: /enable_kv_cache_events: false/ },
  ],
  [
    'workers not a URL',
    ['--kv-events', json({ 'vllm-*': { endpoint: 'tcp://*:5557' } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /name workers by their http\(s\) URL/ },
  ],
  [
    'an ipc endpoint',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'ipc:///tmp/kv' } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /local socket the router cannot reach/ },
  ],
  [
    'an endpoint without a port',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*' } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /is not tcp:\/\/host:port/ },
  ],
  [
    'ranks past the last port',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*:65535', 'dp-size': 2 } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /2 ranks from port 65535 run past 65535/ },
  ],
  [
    'dp-size 0',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*:1', 'dp-size': 0 } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /dp-size must be in 1\.\.1024/ },
  ],
  [
    'replay on another host',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://10.0.0.5:5557', 'replay-endpoint': 'tcp://10.0.0.9:5558' } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /replay-endpoint is on 10\.0\.0\.9, endpoint on 10\.0\.0\.5/ },
  ],
  [
    'replay ports overlapping the ranks',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*:5557', 'replay-endpoint': 'tcp://*:5558', 'dp-size': 2 } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /overlap/ },
  ],
  [
    'bind: the router binds, the engine connects',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://10.0.0.1:5557', bind: true } })],
    null,
  ],
  [
    'bind that is not a boolean',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://10.0.0.1:5557', bind: 'yes' } })],
    { code: 'RCTL_E_PARSE_INVALID_TYPE', message: /bind: expected true or false/ },
  ],
  [
    'bind without an endpoint',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { 'replay-endpoint': 'tcp://*:5558', bind: true } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /bind needs an endpoint/ },
  ],
  [
    'bind for a pattern',
    ['--kv-events', json({ 'http://10.0.0.*:8000': { endpoint: 'tcp://10.0.0.1:5557', bind: true } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /bind names one worker, not a pattern/ },
  ],
  [
    'bind for several ranks',
    ['--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://10.0.0.1:5557', bind: true, 'dp-size': 2 } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /bind takes one rank/ },
  ],
  [
    'one endpoint bound for two workers',
    [
      '--kv-events',
      json({
        'http://10.0.0.5:8000': { endpoint: 'tcp://10.0.0.1:5557', bind: true },
        'http://10.0.0.6:8000': { endpoint: 'tcp://10.0.0.1:5557', bind: true },
      }),
    ],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /tcp:\/\/10\.0\.0\.1:5557 is already bound for 'http:\/\/10\.0\.0\.5:8000'/ },
  ],
  [
    'an entry that matches no worker is a warning',
    ['--kv-events', json({ 'http://10.0.1.*': { endpoint: 'tcp://*:5557' } })],
    null,
    ['RCTL_W_KV_EVENTS_UNMATCHED'],
  ],
  // Value errors come before policy errors (docs/configuration.md §Why value errors come before policy errors).
  [
    'a bad entry under round_robin with a limit: the value error wins',
    ['--policy', 'round_robin', '--worker-queue-limit', '4', '--kv-events', json({ 'http://10.0.0.5:8000': { endpoint: 'tcp://*' } })],
    { code: 'RCTL_E_VALUE_KV_EVENTS', message: /not tcp:\/\/host:port/ },
  ],
];

describe('--kv-events rules', () => {
  it.each(table)('%s', async (_name, flags, first, warnings = []) => {
    const r = await resolveArgs([...W, ...flags]);
    if (first === null) expect(r.errors).toEqual([]);
    else {
      expect(r.errors[0]?.code).toBe(first.code);
      expect(r.errors[0]?.message).toMatch(first.message);
      expect(r.errors[0]?.flag).toBe('--kv-events');
    }
    expect(r.warnings.map((w) => w.code)).toEqual(warnings);
  });

  it('normalises every spelling to one entry; an unset replay endpoint is null, the topic empty, one rank', async () => {
    const r = await resolveArgs([
      ...W,
      '--kv-events',
      json({
        'http://10.0.0.5:8000/': { endpoint: ' tcp://*:5557 ', replayEndpoint: 'tcp://*:5558', dpSize: 1 },
        'http://10.0.0.6:8000': { endpoint: 'tcp://*:6000' },
      }),
    ]);
    expect(r.config.kvEvents).toEqual([
      { workers: 'http://10.0.0.5:8000/', endpoint: 'tcp://*:5557', replayEndpoint: 'tcp://*:5558', topic: '', dpSize: 1 },
      { workers: 'http://10.0.0.6:8000', endpoint: 'tcp://*:6000', replayEndpoint: null, topic: '', dpSize: 1 },
    ]);
  });

  it('a replay-only entry has a null endpoint', async () => {
    const r = await resolveArgs([...W, '--kv-events', json({ 'http://10.0.0.*:8000': { 'replay-endpoint': ' tcp://*:5558 ' } })]);
    expect(r.errors).toEqual([]);
    expect(r.config.kvEvents).toEqual([
      { workers: 'http://10.0.0.*:8000', endpoint: null, replayEndpoint: 'tcp://*:5558', topic: '', dpSize: 1 },
    ]);
  });

  it('reads ROUTERCTL_KV_EVENTS as JSON, below the flag', async () => {
    const env = { ROUTERCTL_KV_EVENTS: json({ 'http://10.0.0.*': { endpoint: 'tcp://*:5557' } }) };
    const fromEnv = await resolveArgs(W, { env });
    expect(fromEnv.config.kvEvents[0]!.endpoint).toBe('tcp://*:5557');
    expect(fromEnv.origins.kvEvents.source).toBe('env');
    const flagWins = await resolveArgs([...W, '--kv-events', json({ 'http://10.0.0.*': { endpoint: 'tcp://*:7000' } })], { env });
    expect(flagWins.config.kvEvents[0]!.endpoint).toBe('tcp://*:7000');
  });
});

describe('--kv-events in an rc file', () => {
  const sb = rcSandbox({ beforeEach, afterEach });

  it('is a YAML mapping; its origin names the file', async () => {
    await sb.write(
      '.routerrc.yaml',
      [
        'worker-urls: [http://10.0.0.5:8000]',
        'kv-events:',
        '  "http://10.0.0.*:8000":',
        '    endpoint: "tcp://*:5557"',
        '    replay-endpoint: "tcp://*:5558"',
        '    topic: kv-events',
        '',
      ].join('\n'),
    );
    const r = await sb.resolveIn();
    expect(r.errors).toEqual([]);
    expect(r.config.kvEvents).toEqual([
      { workers: 'http://10.0.0.*:8000', endpoint: 'tcp://*:5557', replayEndpoint: 'tcp://*:5558', topic: 'kv-events', dpSize: 1 },
    ]);
    expect(r.origins.kvEvents.label).toMatch(/\.routerrc\.yaml:kv-events$/);
  });

  it('a scalar where the mapping belongs is a parse error naming the file', async () => {
    await sb.write('.routerrc.yaml', 'kv-events: 5557\n');
    const r = await sb.resolveIn();
    expect(r.errors[0]).toMatchObject({ code: 'RCTL_E_PARSE_INVALID_TYPE', flag: '--kv-events' });
    expect(r.errors[0]!.origin).toMatch(/\.routerrc\.yaml:kv-events$/);
  });
});
