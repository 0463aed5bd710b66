import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, probeWorkers } from '../../src/config/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';

type Routes = Record<string, { status?: number; body: unknown } | 'hang'>;

const servers: Server[] = [];

/** A stand-in engine that answers the given paths and 404s the rest. */
async function fakeEngine(routes: Routes): Promise<string> {
  const server = createServer((req, res) => {
    const route = routes[(req.url ?? '').split('?')[0]!];
    if (route === 'hang') return; // never answers
    if (route === undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    const text = typeof route.body === 'string' ? route.body : JSON.stringify(route.body);
    res.writeHead(route.status ?? 200, { 'content-type': typeof route.body === 'string' ? 'text/plain' : 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

const models = (id = 'm', owner = 'sglang') => ({
  '/v1/models': { body: { object: 'list', data: [{ id, object: 'model', owned_by: owner }] } },
});
// The index built from requests unless a test says otherwise: the keying-cost and unkeyed-text
// predictions concern only an index built from KV events, and are tested on their own.
const config = (over: Partial<RouterConfig> = {}): RouterConfig => ({ ...defaultConfig(), prefixSource: 'requests', ...over });

describe('probe: every load shape a real engine publishes', () => {
  it.each([
    [
      '/v1/loads, two ranks',
      {
        ...models(),
        '/v1/loads': {
          body: {
            loads: [
              { dp_rank: 0, num_waiting_reqs: 2, num_running_reqs: 1 },
              { dp_rank: 1, num_waiting_reqs: 3, num_running_reqs: 4 },
            ],
          },
        },
        '/get_server_info': { body: { dp_size: 2 } },
      },
      { endpoint: '/v1/loads', waiting: 5, running: 5, ranks: 2 },
      2,
    ],
    [
      'legacy /get_load {"load": N}',
      { ...models(), '/get_load': { body: { load: 3 } } },
      { endpoint: '/get_load', waiting: null, running: null, ranks: null },
      null,
    ],
    [
      '/get_load array of ranks',
      {
        ...models(),
        '/get_load': {
          body: [
            { dp_rank: 0, num_reqs: 3, num_waiting_reqs: 1, num_tokens: 100 },
            { dp_rank: 1, num_reqs: 2, num_waiting_reqs: 2, num_tokens: 10 },
          ],
        },
      },
      // num_reqs is running + waiting; num_tokens is KV in use plus queued prompt tokens.
      { endpoint: '/get_load', shape: 'sglang_get_load', waiting: 3, running: 2, ranks: 2, totalTokens: 110, usedTokens: null },
      2,
    ],
    [
      'a /get_load array without num_waiting_reqs is not a load reading (as for the sampler)',
      { ...models(), '/get_load': { body: [{ dp_rank: 0, num_reqs: 3, num_tokens: 100 }] } },
      null,
      null,
    ],
    [
      'SGLang /metrics only',
      {
        ...models(),
        '/server_info': { body: { dp_size: 2 } },
        '/metrics': {
          body: '# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{model_name="m",dp_rank="0"} 2\nsglang:num_queue_reqs{model_name="m",dp_rank="1"} 1\nsglang:num_running_reqs{model_name="m",dp_rank="0"} 7\nsglang:num_running_reqs{model_name="m",dp_rank="1"} 0\n',
        },
      },
      { endpoint: '/metrics', waiting: 3, running: 7, ranks: 2 },
      2,
    ],
    [
      'vLLM /metrics',
      {
        ...models('m', 'vllm'),
        '/metrics': {
          body: 'vllm:num_requests_waiting{model_name="m",engine="0"} 4.0\nvllm:num_requests_running{model_name="m",engine="0"} 9.0\n',
        },
      },
      { endpoint: '/metrics', waiting: 4, running: 9, ranks: 1 },
      1,
    ],
    ['no load anywhere', { ...models(), '/metrics': { body: 'process_cpu_seconds_total 1\n' } }, null, null],
    [
      'a malformed /v1/loads falls through to /get_load',
      { ...models(), '/v1/loads': { body: { loads: [{ dp_rank: 0 }] } }, '/get_load': { body: [{ num_reqs: 8, num_waiting_reqs: 6 }] } },
      { endpoint: '/get_load', waiting: 6, running: 2 },
      1,
    ],
  ] as [string, Routes, Record<string, unknown> | null, number | null][])('%s', async (_name, routes, load, dpSize) => {
    const url = await fakeEngine(routes);
    const { workers } = await probeWorkers([url], config(), { timeoutMs: 2000 });
    expect(workers[0]).toMatchObject({ url, reachable: true, error: null, models: ['m'], dpSize });
    if (load === null) expect(workers[0]!.load).toBeNull();
    else expect(workers[0]!.load).toMatchObject(load);
  });

  it('tells SGLang from vLLM by owned_by', async () => {
    const a = await fakeEngine(models('m', 'sglang'));
    const b = await fakeEngine(models('m', 'vllm'));
    const { workers } = await probeWorkers([a, b], config());
    expect(workers.map((w) => w.engine)).toEqual(['sglang', 'vllm']);
  });
});

describe('probe: predictions', () => {
  it('warns that the gate is inert when no worker reports load', async () => {
    const a = await fakeEngine(models());
    const b = await fakeEngine(models());
    const { warnings } = await probeWorkers([a, b], config({ workerQueueLimit: 4 }), {
      origins: { workerQueueLimit: { source: 'flag', label: 'flag' } },
    });
    expect(warnings).toMatchObject([
      {
        code: 'RCTL_W_PROBE_NO_LOAD',
        class: 'probe',
        severity: 'warning',
        flag: '--worker-queue-limit',
        origin: 'flag',
        message: `--worker-queue-limit is set but no worker reports load (${a}, ${b}); the queue gate is inert`,
      },
    ]);
  });

  it('counts a legacy {"load": N} as blind for the gate, and names why', async () => {
    const a = await fakeEngine({ ...models(), '/get_load': { body: { load: 1 } } });
    const b = await fakeEngine({ ...models(), '/get_load': { body: [{ num_reqs: 0, num_waiting_reqs: 0 }] } });
    const { warnings } = await probeWorkers([a, b], config({ workerQueueLimit: 4 }));
    expect(warnings.map((w) => w.message)).toEqual([
      `--worker-queue-limit is set but 1 of 2 workers reports no load (${a} (legacy /get_load without a queue length)); the gate will admit them blindly`,
    ]);
  });

  it('says nothing about load when no limit is set', async () => {
    const a = await fakeEngine(models());
    expect((await probeWorkers([a], config())).warnings).toEqual([]);
  });

  it('reminds that limit and floor apply to the sum over DP ranks', async () => {
    const a = await fakeEngine({
      ...models(),
      '/server_info': { body: { dp_size: 4 } },
      '/v1/loads': { body: { loads: [0, 1, 2, 3].map((r) => ({ dp_rank: r, num_waiting_reqs: 0, num_running_reqs: 0 })) } },
    });
    const { warnings } = await probeWorkers([a], config({ workerQueueLimit: 6, saturationQueueFloor: 2 }));
    expect(warnings.map((w) => [w.code, w.message])).toEqual([
      [
        'RCTL_W_PROBE_DP_SCALE',
        `--worker-queue-limit 6 with dp-size 4: the limit applies to the sum over ranks, about 1.5 waiting per rank (${a})`,
      ],
      [
        'RCTL_W_PROBE_DP_SCALE',
        `--saturation-queue-floor 2 with dp-size 4: the floor applies to the sum over ranks, about 0.5 waiting per rank (${a})`,
      ],
    ]);
  });

  it('checks --model-id against each worker, and workers against each other', async () => {
    const a = await fakeEngine({ ...models('llama') });
    const b = await fakeEngine({ ...models('qwen') });
    const named = await probeWorkers([a, b], config({ modelId: 'llama' }));
    expect(named.warnings.map((w) => w.message)).toEqual([`--model-id llama is not served by ${b} (it serves qwen)`]);
    const discovered = await probeWorkers([a, b], config());
    expect(discovered.warnings.map((w) => w.message)).toEqual([
      `workers serve different models (${a}: llama; ${b}: qwen); set --model-id to the one to route`,
    ]);
  });

  it('warns when a worker answers but lists no model', async () => {
    const a = await fakeEngine({ '/v1/loads': { body: { loads: [{ num_waiting_reqs: 0 }] } } });
    const { workers, warnings } = await probeWorkers([a], config());
    expect(workers[0]).toMatchObject({ reachable: true, models: null });
    expect(warnings).toMatchObject([{ code: 'RCTL_W_PROBE_NO_MODELS' }]);
  });
});

describe('probe: unreachable workers are warnings, not crashes', () => {
  it('a closed port', async () => {
    const url = await closedPort();
    const { workers, warnings } = await probeWorkers([url], config({ workerQueueLimit: 4 }));
    expect(workers[0]).toMatchObject({ url, reachable: false, models: null, load: null });
    expect(workers[0]!.error).toContain('ECONNREFUSED');
    expect(warnings).toMatchObject([
      { code: 'RCTL_W_PROBE_UNREACHABLE', message: expect.stringContaining(`worker ${url} is unreachable: `) },
    ]);
  });

  it('workers that never answer cost one time budget, in parallel', async () => {
    const hang: Routes = { '/v1/models': 'hang', '/v1/loads': 'hang', '/server_info': 'hang' };
    const urls = await Promise.all([fakeEngine(hang), fakeEngine(hang), fakeEngine(hang)]);
    const started = Date.now();
    const { workers } = await probeWorkers(urls, config(), { timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(1500);
    for (const w of workers) expect(w).toMatchObject({ reachable: false, error: 'no answer within 300 ms' });
  });
});

describe('probe against simulated engines', () => {
  let fleet: SimFleet;
  beforeAll(async () => {
    fleet = await startSimFleet({ workers: 2, host: '127.0.0.1', portBase: 0, speedup: 50 });
    const res = await fetch(`${fleet.urls[1]}/sim/config`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ load_reporting: false }),
    });
    expect(res.status).toBe(200);
  });
  afterAll(async () => fleet?.close());

  it('names the worker that publishes no load; an unreachable URL is one more warning', async () => {
    const [reporting, silent] = fleet.urls as [string, string];
    const down = await closedPort();
    const { workers, warnings } = await probeWorkers([reporting, silent, down], config({ workerQueueLimit: 4 }), { timeoutMs: 2000 });
    expect(workers[0]).toMatchObject({ reachable: true, engine: 'sglang', dpSize: 1, load: { endpoint: '/v1/loads' } });
    expect(workers[1]).toMatchObject({ reachable: true, load: null });
    expect(workers[2]).toMatchObject({ reachable: false });
    const noLoad = warnings.find((w) => w.code === 'RCTL_W_PROBE_NO_LOAD');
    expect(noLoad?.message).toBe(
      `--worker-queue-limit is set but 1 of 2 workers reports no load (${silent}); the gate will admit them blindly`,
    );
    expect(noLoad?.message).not.toContain(reporting);
    expect(warnings.map((w) => w.code).sort()).toEqual(['RCTL_W_PROBE_NO_LOAD', 'RCTL_W_PROBE_UNREACHABLE']);
  });
});

describe('probe: push channels (docs/engine-push.md §Discovery)', () => {
  it('reports load by push, KV events, their block size and replay sockets for engines that publish', async () => {
    const pushing = await startSimFleet({
      workers: 1,
      blockSize: 32,
      push: { kvEvents: true, kvFormat: 'map', loadPublish: true, topic: '' },
    });
    try {
      const { workers, warnings } = await probeWorkers(pushing.urls, config({ blockSize: 32 }));
      expect(workers[0]!.push).toMatchObject({ kvEvents: true, blockSize: 32, load: 'live', from: 'engine', scheme: 'sim' });
      expect(workers[0]!.push!.endpoints.load).toEqual([expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/)]);
      expect(workers[0]!.push!.endpoints.replay).toEqual([expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/)]);
      expect(['descriptor', 'kv_events_config']).toContain(workers[0]!.push!.replayFrom);
      expect(workers[0]!.push!.keying).toMatchObject({ scheme: 'sim', blockSize: 32, tokens: 100_000, ms: expect.any(Number) });
      expect(warnings).toEqual([]);
      // Another --block-size is no longer a warning: the router keys each worker's events at its advertised size.
      const other = await probeWorkers(pushing.urls, config({ blockSize: 16 }));
      expect(other.warnings).toEqual([]);
    } finally {
      await pushing.close();
    }
  });

  it('an advertised load channel that never speaks is a warning, and the worker counts as polled', async () => {
    const port = Number(new URL(await closedPort()).port);
    const url = await fakeEngine({
      ...models(),
      '/v1/loads': { body: { loads: [{ dp_rank: 0, num_waiting_reqs: 0, num_running_reqs: 0 }] } },
      '/server_info': {
        body: {
          dp_size: 1,
          kv_events: {
            publisher: 'zmq',
            endpoint_host: '*',
            endpoint_port_base: port,
            topic: '',
            block_size: 16,
            dp_size: 1,
            load_endpoint_port_base: port,
            load_topic: 'load',
          },
        },
      },
    });
    const { workers, warnings } = await probeWorkers([url], config(), { timeoutMs: 800 });
    expect(workers[0]!.push).toMatchObject({ kvEvents: true, load: 'silent' });
    // The descriptor names no replay endpoint, and there is no kv_events_config: that too.
    expect(warnings.map((w) => w.code)).toEqual(['RCTL_W_PROBE_PUSH_SILENT', 'RCTL_W_PROBE_NO_REPLAY']);
  });

  it('a vLLM engine named by --kv-events: its endpoints from the entry, its block size from /metrics', async () => {
    const vllm = await startSimFleet({
      workers: 1,
      flavor: 'vllm',
      blockSize: 32,
      push: { kvEvents: true, kvFormat: 'map', loadPublish: false, topic: 'kv' },
    });
    try {
      const e = vllm.servers[0]!.engine.push!.kvEventsEntry()!;
      const kvEvents = [
        { workers: 'http://127.0.0.*', endpoint: e.endpoint, replayEndpoint: e['replay-endpoint'], topic: 'kv', dpSize: 1 },
      ];
      const { workers, warnings } = await probeWorkers(vllm.urls, config({ blockSize: 16, kvEvents }));
      expect(workers[0]!.push).toMatchObject({
        kvEvents: true,
        blockSize: 32,
        load: null,
        from: 'config',
        replayFrom: 'config',
        scheme: 'tokens',
      });
      expect(workers[0]!.push!.endpoints.kvEvents).toEqual([e.endpoint.replace('*', '127.0.0.1')]);
      expect(workers[0]!.push!.endpoints.replay).toEqual([e['replay-endpoint'].replace('*', '127.0.0.1')]);
      expect(warnings).toEqual([]);
      // Without an entry, the probe reads them where vLLM 0.32 advertises them, /kv_event_sources.
      const found = (await probeWorkers(vllm.urls, config({ blockSize: 32 }))).workers[0]!.push;
      expect(found).toMatchObject({ kvEvents: true, blockSize: 32, from: 'engine', replayFrom: 'descriptor', bind: false });
      expect(found!.endpoints.kvEvents).toEqual([e.endpoint.replace('*', '127.0.0.1')]);
    } finally {
      await vllm.close();
    }
  });

  it('an engine whose kv_events block is null (no --kv-events-config) has no push channels', async () => {
    const url = await fakeEngine({ ...models(), '/server_info': { body: { dp_size: 1, kv_events: null } } });
    const { workers, warnings } = await probeWorkers([url], config());
    expect(workers[0]!.push).toBeNull();
    expect(warnings.map((w) => w.code)).not.toContain('RCTL_W_PROBE_PUSH_SILENT');
  });
});

/** Bodies as real engines serve them (test/engines/fixtures/README.md). */
const fixture = (name: string): string => readFileSync(new URL(`../engines/fixtures/${name}`, import.meta.url), 'utf8');
const sglang = (name: string): Routes => ({
  ...models('Qwen/Qwen3-0.6B'),
  '/server_info': { body: JSON.parse(fixture(`sglang-server-info-${name}.json`)) as unknown },
});
const eventsConfig = (over: Partial<RouterConfig> = {}): RouterConfig => config({ policy: 'cache_aware', prefixSource: 'events', ...over });

describe('probe: KV events as SGLang and vLLM publish them (test/engines/fixtures)', () => {
  it('SGLang with replay_endpoint in its --kv-events-config: the replay socket, read from kv_events_config; no replay warning', async () => {
    const url = await fakeEngine(sglang('no-load'));
    const { workers, warnings } = await probeWorkers([url], config());
    expect(workers[0]!.push).toMatchObject({
      kvEvents: true,
      blockSize: 16,
      load: null,
      from: 'engine',
      replayFrom: 'kv_events_config',
      scheme: 'sglang',
    });
    expect(workers[0]!.push!.endpoints).toEqual({ kvEvents: ['tcp://127.0.0.1:5557'], load: [], replay: ['tcp://127.0.0.1:5558'] });
    expect(workers[0]!.simulated).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('SGLang without a replay endpoint (the live descriptor, block_size 1): a later replica begins empty, and how to fix it', async () => {
    const url = await fakeEngine(sglang('block1'));
    const { workers, warnings } = await probeWorkers([url], config(), { origins: { kvEvents: { source: 'default', label: 'default' } } });
    expect(workers[0]!.push).toMatchObject({ blockSize: 1, replayFrom: null, endpoints: { replay: [] } });
    expect(warnings.map((w) => w.code)).toEqual(['RCTL_W_PROBE_NO_REPLAY']);
    expect(warnings[0]).toMatchObject({ class: 'probe', flag: '--kv-events' });
    expect(warnings[0]!.message).toBe(
      `worker ${url} publishes KV events but names no replay endpoint: a router replica started later begins empty (it cannot fetch what the engine published before it subscribed), and a lost batch cannot be repaired; set replay_endpoint in the engine's --kv-events-config (e.g. "replay_endpoint": "tcp://*:5558"), or name it with --kv-events '{"${url}": {"replay-endpoint": "tcp://…"}}'`,
    );
  });

  it('a replay-only --kv-events entry fills the gap and keeps the engine as the source of the rest', async () => {
    const url = await fakeEngine(sglang('block1'));
    const kvEvents = [{ workers: url, endpoint: null, replayEndpoint: 'tcp://*:5558', topic: '', dpSize: 1 }];
    const { workers, warnings } = await probeWorkers([url], config({ kvEvents }));
    expect(workers[0]!.push).toMatchObject({ from: 'engine', replayFrom: 'config', blockSize: 1 });
    expect(workers[0]!.push!.endpoints).toEqual({ kvEvents: ['tcp://127.0.0.1:5557'], load: [], replay: ['tcp://127.0.0.1:5558'] });
    expect(warnings.map((w) => w.code)).not.toContain('RCTL_W_PROBE_NO_REPLAY');
    // For a worker that advertises no KV events, the entry gives none.
    const none = await fakeEngine(sglang('no-kv-events'));
    const bare = await probeWorkers([none], config({ kvEvents: [{ ...kvEvents[0]!, workers: none }] }));
    expect(bare.workers[0]!.push).toBeNull();
    expect(bare.warnings).toEqual([]);
  });

  it('a malformed kv_events_config: the channels still, no replay, a warning', async () => {
    const url = await fakeEngine(sglang('malformed-config'));
    const { workers, warnings } = await probeWorkers([url], config());
    expect(workers[0]!.push!.endpoints).toEqual({ kvEvents: ['tcp://127.0.0.1:5557'], load: [], replay: [] });
    expect(warnings.map((w) => w.code)).toEqual(['RCTL_W_PROBE_NO_REPLAY']);
  });

  it('keying a 100K-token prompt at the advertised block size is measured once per (scheme, block size), and reported', async () => {
    const a = await fakeEngine(sglang('no-load'));
    const b = await fakeEngine(sglang('no-load'));
    const { workers } = await probeWorkers([a, b], config());
    const [ka, kb] = workers.map((w) => w.push!.keying);
    expect(ka).toMatchObject({ scheme: 'sglang', blockSize: 16, tokens: 100_000 });
    expect(ka!.ms).toBeGreaterThan(0);
    // One measurement for both workers: the same figure.
    expect(kb).toBe(ka);
  });

  it("with the index built from events, SGLang's hash at block size 1 costs more than 1 ms per prompt: a warning naming the figure and the fix", async () => {
    const url = await fakeEngine(sglang('block1'));
    const { workers, warnings } = await probeWorkers([url], eventsConfig({ tokenizer: 'tokenizer.json' }));
    const cost = warnings.find((w) => w.code === 'RCTL_W_PROBE_KEYING_COST');
    const ms = workers[0]!.push!.keying!.ms;
    expect(ms).toBeGreaterThan(1);
    expect(cost?.message).toBe(
      `worker ${url}: keying a 100K-token prompt at its block size of 1 token with SGLang's SHA-256 page chain took ${ms.toFixed(1)} ms here, more than 1 ms of the request's time (a prompt that begins as one seen before resumes from a checkpoint, and costs less); a larger engine page size (SGLang --page-size) lowers it`,
    );
    // Built from requests, the router keys by its own hash: no warning, though the figure is still reported.
    const byRequests = await probeWorkers([url], config({ prefixSource: 'requests' }));
    expect(byRequests.warnings.map((w) => w.code)).not.toContain('RCTL_W_PROBE_KEYING_COST');
    expect(byRequests.workers[0]!.push!.keying).toMatchObject({ scheme: 'sglang', blockSize: 1 });
  });

  it.each([
    [
      'events',
      (url: string) =>
        `--prefix-source events without --tokenizer: the text prompts (chat, completions, text) of the SGLang worker ${url} will be routed without prefix affinity and counted in sgl_router_prefix_unkeyed_requests_total{reason="no_tokenizer"}; token-id requests (/generate input_ids, completions with token-id prompts) are keyed by the engine's hash; set --tokenizer PATH to the model's tokenizer.json`,
    ],
    [
      'auto',
      (url: string) =>
        `--prefix-source auto without --tokenizer: the SGLang worker ${url} publishes KV events, but text prompts cannot be keyed as the engine tokenizes them, so the prefix index will be built from requests; set --tokenizer PATH to the model's tokenizer.json, or --prefix-source events if the traffic is token ids (/generate input_ids)`,
    ],
  ] as const)(
    '--prefix-source %s without --tokenizer: predicts what the router will do with SGLang text prompts',
    async (prefixSource, expected) => {
      const url = await fakeEngine(sglang('no-load'));
      const { warnings } = await probeWorkers([url], eventsConfig({ prefixSource }), {
        origins: { tokenizer: { source: 'default', label: 'default' } },
      });
      const unkeyed = warnings.filter((w) => w.code === 'RCTL_W_PROBE_UNKEYED_TEXT');
      expect(unkeyed).toMatchObject([{ class: 'probe', flag: '--tokenizer' }]);
      expect(unkeyed[0]!.message).toBe(expected(url));
    },
  );

  it('no unkeyed-text warning with --tokenizer, with --prefix-source requests, under another policy, or for workers without KV events', async () => {
    const url = await fakeEngine(sglang('no-load'));
    const none = await fakeEngine(sglang('no-kv-events'));
    for (const c of [
      eventsConfig({ tokenizer: 'tokenizer.json' }),
      eventsConfig({ prefixSource: 'requests' }),
      eventsConfig({ policy: 'round_robin' }),
    ]) {
      expect((await probeWorkers([url], c)).warnings.map((w) => w.code)).not.toContain('RCTL_W_PROBE_UNKEYED_TEXT');
    }
    expect((await probeWorkers([none], eventsConfig())).warnings).toEqual([]);
  });

  it('vLLM named by --kv-events, block size from vllm:cache_config_info: its text needs the tokenizer too', async () => {
    const url = await fakeEngine({ ...models('Qwen/Qwen3-0.6B', 'vllm'), '/metrics': { body: fixture('vllm-metrics.txt') } });
    const kvEvents = [{ workers: url, endpoint: 'tcp://*:5557', replayEndpoint: 'tcp://*:5558', topic: 'kv-events', dpSize: 1 }];
    const { workers, warnings } = await probeWorkers([url], eventsConfig({ kvEvents }));
    expect(workers[0]).toMatchObject({ engine: 'vllm', load: { endpoint: '/metrics', waiting: 1, running: 2 } });
    expect(workers[0]!.push).toMatchObject({
      blockSize: 32,
      from: 'config',
      replayFrom: 'config',
      scheme: 'tokens',
      keying: { scheme: 'tokens', blockSize: 32 },
    });
    expect(workers[0]!.push!.endpoints).toEqual({ kvEvents: ['tcp://127.0.0.1:5557'], load: [], replay: ['tcp://127.0.0.1:5558'] });
    const unkeyed = warnings.find((w) => w.code === 'RCTL_W_PROBE_UNKEYED_TEXT');
    expect(unkeyed?.message).toContain(`of the vLLM worker ${url} will be routed without prefix affinity`);
    expect(unkeyed?.message).toContain(
      'token-id requests (/generate input_ids, completions with token-id prompts) are keyed by their tokens, as its events key their blocks',
    );
  });

  it("routerctl's simulator keys with its stand-in tokenizer: no unkeyed-text warning", async () => {
    const pushing = await startSimFleet({ workers: 1, push: { kvEvents: true, kvFormat: 'map', loadPublish: false, topic: '' } });
    try {
      const { workers, warnings } = await probeWorkers(pushing.urls, eventsConfig());
      expect(workers[0]).toMatchObject({ simulated: true, push: { scheme: 'sim' } });
      expect(warnings.map((w) => w.code)).not.toContain('RCTL_W_PROBE_UNKEYED_TEXT');
    } finally {
      await pushing.close();
    }
  });
});
