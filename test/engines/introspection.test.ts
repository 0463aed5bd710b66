import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import {
  kvEventsRuleFor,
  mergePushInfo,
  kvEventsEndpoint,
  parseKvEventSources,
  parseServerInfo,
  pushEndpoint,
  pushInfoFromRule,
  replayEndpoints,
  vllmBlockSize,
} from '../../src/engines/index.js';
import type { KvEventsRule, PushInfo } from '../../src/engines/index.js';
import { introspectWorker } from '../../src/router/workers/introspect.js';

/**
 * Discovery from the bodies real engines serve (test/engines/fixtures/README.md traces
 * every key), through routerctl's own readers (docs/engine-push.md §Discovery).
 */
const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const serverInfo = (name: string): unknown => JSON.parse(fixture(`sglang-server-info-${name}.json`)) as unknown;

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

/** A stand-in SGLang worker on 127.0.0.1 that serves one /server_info fixture, and 404s the rest. */
async function sglangWorker(name: string): Promise<string> {
  const body = fixture(`sglang-server-info-${name}.json`);
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/v1/models')
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: 'Qwen/Qwen3-0.6B', object: 'model', owned_by: 'sglang' }] }));
    else if (path === '/server_info') res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const W = 'http://127.0.0.1:30000';
const kvEndpoints = (url: string, info: PushInfo): string[] =>
  Array.from({ length: info.dpSize }, (_, r) => pushEndpoint(url, info, info.kvPortBase, r));
const loadEndpoints = (url: string, info: PushInfo): string[] =>
  info.loadPortBase === null ? [] : Array.from({ length: info.dpSize }, (_, r) => pushEndpoint(url, info, info.loadPortBase!, r));
const rule = (workers: string, more: Partial<KvEventsRule>): KvEventsRule => ({
  workers,
  endpoint: null,
  replayEndpoint: null,
  topic: '',
  dpSize: 1,
  ...more,
});

describe('parseServerInfo on SGLang /server_info as it is published', () => {
  it.each([
    [
      'load',
      {
        kv: ['tcp://127.0.0.1:5557'],
        replay: ['tcp://127.0.0.1:5558'],
        load: ['tcp://127.0.0.1:5559'],
        blockSize: 16,
        replayFrom: 'kv_events_config',
      },
    ],
    [
      'no-load',
      { kv: ['tcp://127.0.0.1:5557'], replay: ['tcp://127.0.0.1:5558'], load: [], blockSize: 16, replayFrom: 'kv_events_config' },
    ],
    [
      'dp2',
      {
        kv: ['tcp://127.0.0.1:5557', 'tcp://127.0.0.1:5558'],
        replay: ['tcp://127.0.0.1:5559', 'tcp://127.0.0.1:5560'],
        load: ['tcp://127.0.0.1:5561', 'tcp://127.0.0.1:5562'],
        blockSize: 16,
        replayFrom: 'kv_events_config',
      },
    ],
    // The live run's descriptor: SGLang's default page size of 1, and no replay endpoint configured.
    ['block1', { kv: ['tcp://127.0.0.1:5557'], replay: [], load: [], blockSize: 1, replayFrom: null }],
    // A kv_events_config that is not JSON: no replay, and no throw.
    ['malformed-config', { kv: ['tcp://127.0.0.1:5557'], replay: [], load: [], blockSize: 16, replayFrom: null }],
  ] as const)('%s', (name, want) => {
    const info = parseServerInfo(serverInfo(name));
    expect(info).not.toBeNull();
    const push = info!.push!;
    expect(push).toMatchObject({
      host: null,
      replayHost: null,
      blockSize: want.blockSize,
      replayFrom: want.replayFrom,
      snapshotPortBase: null,
    });
    expect(kvEndpoints(W, push)).toEqual(want.kv);
    expect(replayEndpoints(W, push)).toEqual(want.replay);
    expect(loadEndpoints(W, push)).toEqual(want.load);
  });

  it('no kv_events (null, and no kv_events_config): no push channels', () => {
    expect(parseServerInfo(serverInfo('no-kv-events'))).toMatchObject({
      dpSize: 1,
      push: null,
      schedulePolicy: 'fcfs',
      cacheAwareSchedule: false,
    });
  });

  it("the worker URL's host stands in for every wildcard, IPv6 and names included; a named host is kept", () => {
    const push = parseServerInfo(serverInfo('dp2'))!.push!;
    expect(replayEndpoints('http://[fd00::5]:8000', push)).toEqual(['tcp://[fd00::5]:5559', 'tcp://[fd00::5]:5560']);
    expect(replayEndpoints('http://sglang-0.pods:8000/', push)).toEqual(['tcp://sglang-0.pods:5559', 'tcp://sglang-0.pods:5560']);
    for (const wildcard of ['*', '0.0.0.0', '[::]']) {
      const body = {
        dp_size: 1,
        kv_events: { publisher: 'zmq', endpoint_host: '*', endpoint_port_base: 5557 },
        kv_events_config: JSON.stringify({ replay_endpoint: `tcp://${wildcard}:6000` }),
      };
      expect(replayEndpoints('http://10.0.0.5:8000', parseServerInfo(body)!.push!)).toEqual(['tcp://10.0.0.5:6000']);
    }
    const named = parseServerInfo({
      dp_size: 1,
      kv_events: { publisher: 'zmq', endpoint_host: '10.0.0.9', endpoint_port_base: 5557 },
      kv_events_config: '{"replay_endpoint": "tcp://10.0.0.9:5558"}',
    })!.push!;
    expect(named).toMatchObject({ host: '10.0.0.9', replayHost: '10.0.0.9', replayPortBase: 5558 });
    expect(replayEndpoints('http://10.0.0.5:8000', named)).toEqual(['tcp://10.0.0.9:5558']);
  });

  it('kv_events_config as a mapping, not a string, is read the same; its snapshot_endpoint is carried', () => {
    const body = {
      dp_size: 2,
      kv_events: { publisher: 'zmq', endpoint_host: '*', endpoint_port_base: 5557, dp_size: 2 },
      kv_events_config: { publisher: 'zmq', endpoint: 'tcp://*:5557', replay_endpoint: 'tcp://*:5559', snapshot_endpoint: 'tcp://*:5561' },
    };
    const push = parseServerInfo(body)!.push!;
    expect(push).toMatchObject({
      replayHost: null,
      replayPortBase: 5559,
      replayFrom: 'kv_events_config',
      snapshotHost: null,
      snapshotPortBase: 5561,
    });
    expect(replayEndpoints(W, push)).toEqual(['tcp://127.0.0.1:5559', 'tcp://127.0.0.1:5560']);
  });

  it('a replay key in the descriptor itself wins over kv_events_config: a tcp:// string, or a port base on the endpoint host', () => {
    const kvEventsConfig = '{"replay_endpoint": "tcp://*:5558"}';
    const descriptor = { publisher: 'zmq', endpoint_host: '*', endpoint_port_base: 5557 };
    const byString = parseServerInfo({
      dp_size: 1,
      kv_events: { ...descriptor, replay_endpoint: 'tcp://*:7000' },
      kv_events_config: kvEventsConfig,
    })!.push!;
    expect(byString).toMatchObject({ replayPortBase: 7000, replayFrom: 'descriptor' });
    const byPort = parseServerInfo({
      dp_size: 1,
      kv_events: { ...descriptor, replay_endpoint_port_base: 7100 },
      kv_events_config: kvEventsConfig,
    })!.push!;
    expect(byPort).toMatchObject({ replayHost: null, replayPortBase: 7100, replayFrom: 'descriptor' });
    // A descriptor key that is not an endpoint falls back to kv_events_config.
    const junk = parseServerInfo({
      dp_size: 1,
      kv_events: { ...descriptor, replay_endpoint: 'ipc:///tmp/replay', replay_endpoint_port_base: 0 },
      kv_events_config: kvEventsConfig,
    })!.push!;
    expect(junk).toMatchObject({ replayPortBase: 5558, replayFrom: 'kv_events_config' });
  });

  it.each([
    ['not JSON', '{"replay_endpoint": "tcp://*:5558"'],
    ['JSON, not a mapping', '["tcp://*:5558"]'],
    ['a replay endpoint that is not tcp://host:port', '{"replay_endpoint": "tcp://*"}'],
    ['a local socket', '{"replay_endpoint": "ipc:///tmp/r"}'],
    ['a number', 5558],
    ['an empty string', ''],
  ])('kv_events_config %s: no replay, no throw', (_name, kvEventsConfig) => {
    const push = parseServerInfo({
      dp_size: 1,
      kv_events: { publisher: 'zmq', endpoint_host: '*', endpoint_port_base: 5557 },
      kv_events_config: kvEventsConfig,
    })!.push!;
    expect(push).toMatchObject({ replayPortBase: null, replayHost: null, replayFrom: null });
    expect(replayEndpoints(W, push)).toEqual([]);
  });
});

describe('--kv-events entries as push facts', () => {
  it('an entry with an endpoint: its replay endpoint, from the configuration', () => {
    const info = pushInfoFromRule(rule('http://h', { endpoint: 'tcp://*:5557', replayEndpoint: 'tcp://*:5600', dpSize: 2 }))!;
    expect(info).toMatchObject({
      host: null,
      kvPortBase: 5557,
      replayHost: null,
      replayPortBase: 5600,
      replayFrom: 'config',
      loadPortBase: null,
    });
    expect(replayEndpoints('http://10.0.0.5:8000', info)).toEqual(['tcp://10.0.0.5:5600', 'tcp://10.0.0.5:5601']);
    expect(pushInfoFromRule(rule('http://h', { endpoint: 'tcp://*:5557' }))).toMatchObject({ replayPortBase: null, replayFrom: null });
  });

  it('a replay-only entry gives no push facts of its own', () => {
    expect(pushInfoFromRule(rule('http://h', { replayEndpoint: 'tcp://*:5558' }))).toBeNull();
  });
});

describe("the registry's merge of what a worker advertises with --kv-events, over HTTP", () => {
  it('without an entry: the advertised channels, replay from kv_events_config', async () => {
    const url = await sglangWorker('load');
    const info = await introspectWorker(url, 2000);
    expect(info).toMatchObject({ reachable: true, flavor: 'sglang', dpSize: 1, models: ['Qwen/Qwen3-0.6B'] });
    const { push, pushFrom } = mergePushInfo(info.push, kvEventsRuleFor([], url));
    expect(pushFrom).toBe('engine');
    expect(kvEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:5557']);
    expect(replayEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:5558']);
    expect(loadEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:5559']);
    expect(push!.replayFrom).toBe('kv_events_config');
  });

  it('a replay-only entry keeps the advertised channels and load push, and names the replay socket', async () => {
    const url = await sglangWorker('load');
    const info = await introspectWorker(url, 2000);
    const rules = [rule('http://127.0.0.1:*', { replayEndpoint: 'tcp://*:6000' })];
    const { push, pushFrom } = mergePushInfo(info.push, kvEventsRuleFor(rules, url));
    expect(pushFrom).toBe('engine');
    expect(push).toMatchObject({ blockSize: 16, kvTopic: 'kv', loadPortBase: 5559, loadTopic: 'load', replayFrom: 'config' });
    expect(kvEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:5557']);
    expect(replayEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:6000']);
    expect(loadEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:5559']);
  });

  it('a replay-only entry for DP 2: one replay socket per advertised rank', async () => {
    const url = await sglangWorker('dp2');
    const { push } = mergePushInfo((await introspectWorker(url, 2000)).push, rule(url, { replayEndpoint: 'tcp://*:6000' }));
    expect(replayEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:6000', 'tcp://127.0.0.1:6001']);
  });

  it('a replay-only entry gives the replay socket the descriptor lacks (block_size 1, no replay_endpoint)', async () => {
    const url = await sglangWorker('block1');
    const info = await introspectWorker(url, 2000);
    expect(replayEndpoints(url, info.push!)).toEqual([]);
    const { push } = mergePushInfo(info.push, rule(url, { replayEndpoint: 'tcp://127.0.0.1:5558' }));
    expect(push).toMatchObject({ blockSize: 1, replayHost: '127.0.0.1', replayFrom: 'config' });
    expect(replayEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:5558']);
  });

  it('an entry with an endpoint replaces the advertised channels: no load push, its own replay', async () => {
    const url = await sglangWorker('load');
    const { push, pushFrom } = mergePushInfo(
      (await introspectWorker(url, 2000)).push,
      rule(url, { endpoint: 'tcp://*:7000', replayEndpoint: 'tcp://*:7001' }),
    );
    expect(pushFrom).toBe('config');
    expect(push).toMatchObject({ kvPortBase: 7000, loadPortBase: null, blockSize: null, replayFrom: 'config' });
    expect(replayEndpoints(url, push!)).toEqual(['tcp://127.0.0.1:7001']);
  });

  it('a replay-only entry for a worker that advertises no KV events: still none', async () => {
    const url = await sglangWorker('no-kv-events');
    const info = await introspectWorker(url, 2000);
    expect(info.push).toBeNull();
    expect(mergePushInfo(info.push, rule(url, { replayEndpoint: 'tcp://*:5558' }))).toEqual({ push: null, pushFrom: null });
  });

  it('a malformed kv_events_config over HTTP: the channels, no replay', async () => {
    const url = await sglangWorker('malformed-config');
    const info = await introspectWorker(url, 2000);
    expect(info.reachable).toBe(true);
    expect(kvEndpoints(url, info.push!)).toEqual(['tcp://127.0.0.1:5557']);
    expect(replayEndpoints(url, info.push!)).toEqual([]);
  });
});

describe("vLLM's /kv_event_sources", () => {
  const rank = (endpoint: string, more: Record<string, unknown> = {}) => ({
    enable_kv_cache_events: true,
    publisher: 'zmq',
    endpoint,
    replay_endpoint: null,
    buffer_steps: 10000,
    hwm: 100000,
    max_queue_size: 100000,
    topic: 'kv-events',
    ...more,
  });

  it("a concrete address: the engine connects to it, so the router binds it; its replay socket is the engine's", () => {
    // As vLLM 0.32 answers it (test/peers/vllm-cpu.test.ts runs the real one).
    const info = parseKvEventSources({ '0': rank('tcp://127.0.0.1:15601', { replay_endpoint: 'tcp://127.0.0.1:15611' }) })!;
    expect(info).toMatchObject({ host: '127.0.0.1', kvPortBase: 15601, kvTopic: 'kv-events', dpSize: 1, kvBind: true });
    expect(info).toMatchObject({ replayHost: '127.0.0.1', replayPortBase: 15611, replayFrom: 'descriptor' });
    expect(kvEventsEndpoint('http://10.0.0.5:8000', info, 0)).toBe('tcp://127.0.0.1:15601');
    expect(replayEndpoints('http://10.0.0.5:8000', info)).toEqual(['tcp://127.0.0.1:15611']);
  });

  it("a wildcard: the engine binds, and the router connects to the worker URL's host, one port per rank", () => {
    const info = parseKvEventSources({ '0': rank('tcp://*:5557'), '1': rank('tcp://*:5558') })!;
    expect(info).toMatchObject({ host: null, kvPortBase: 5557, dpSize: 2 });
    expect(info.kvBind).toBeUndefined();
    expect([0, 1].map((r) => kvEventsEndpoint('http://10.0.0.5:8000', info, r))).toEqual(['tcp://10.0.0.5:5557', 'tcp://10.0.0.5:5558']);
  });

  it.each([
    ['events off: an empty map', {}],
    ['not zmq', { '0': rank('tcp://*:5557', { publisher: 'null' }) }],
    ['no rank 0', { '1': rank('tcp://*:5558') }],
    ['ranks not on consecutive ports', { '0': rank('tcp://*:5557'), '1': rank('tcp://*:6000') }],
    ['an ipc socket', { '0': rank('ipc:///tmp/kv') }],
    ['not a map', []],
  ])('gives nothing for %s', (_, body) => {
    expect(parseKvEventSources(body)).toBeNull();
  });
});

describe('vLLM /metrics', () => {
  it('vllmBlockSize reads block_size from vllm:cache_config_info', () => {
    expect(vllmBlockSize(fixture('vllm-metrics.txt'))).toBe(32);
    expect(vllmBlockSize('vllm:num_requests_waiting{engine="0"} 0\n')).toBeNull();
  });
});
