/**
 * One table, every engine load shape we read (docs/engine-load.md): each is fed to
 * the one reader (src/engines), then served over real HTTP to the router's sampler
 * and to `check-config --probe`, which must report the same numbers.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig, probeWorkers } from '../../src/config/index.js';
import { LOAD_ENDPOINTS, LOAD_SOURCES, readLoadReply, summarizeLoad } from '../../src/engines/index.js';
import type { LoadShape, LoadSource } from '../../src/engines/index.js';
import { LoadSampler, LoadTable } from '../../src/router/state/load-monitor/index.js';
import type { SampleStatus } from '../../src/router/state/load-monitor/index.js';
import type { Worker } from '../../src/router/upstream/worker.js';
import type { AdminState } from '../../src/contract/index.js';
import { eventually } from '../helpers/http.js';
import { startTestRouter } from '../helpers/router.js';

// ------------------------------------------------------------ prometheus_client spellings

type Row = readonly [labels: Record<string, string>, value: number];

/** Python's repr of a float: integral values keep ".0". */
const py = (v: number): string => (Number.isInteger(v) ? v.toFixed(1) : String(v));
const labelText = (labels: Record<string, string>): string => {
  const keys = Object.keys(labels).sort();
  return keys.length === 0 ? '' : `{${keys.map((k) => `${k}="${labels[k]}"`).join(',')}}`;
};
const gauge = (name: string, help: string, rows: readonly Row[]): string =>
  `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${rows.map(([l, v]) => `${name}${labelText(l)} ${py(v)}\n`).join('')}`;
/** A counter as prometheus_client 0.0.4 writes it: `_total`, then a `_created` gauge family. */
const counter = (base: string, help: string, rows: readonly Row[]): string =>
  `# HELP ${base}_total ${help}\n# TYPE ${base}_total counter\n${rows.map(([l, v]) => `${base}_total${labelText(l)} ${py(v)}\n`).join('')}` +
  `# HELP ${base}_created ${help}\n# TYPE ${base}_created gauge\n${rows.map(([l]) => `${base}_created${labelText(l)} 1.7301234567e+09\n`).join('')}`;
const histogram = (name: string, help: string, labels: Record<string, string>): string =>
  `# HELP ${name} ${help}\n# TYPE ${name} histogram\n` +
  ['0.1', '0.25', '0.5', '1.0', '+Inf'].map((le, i) => `${name}_bucket${labelText({ ...labels, le })} ${py(3 + i)}\n`).join('') +
  `${name}_count${labelText(labels)} 7.0\n${name}_sum${labelText(labels)} 1.8345\n` +
  `# HELP ${name}_created ${help}\n# TYPE ${name}_created gauge\n${name}_created${labelText(labels)} 1.7301234567e+09\n`;
const PROCESS =
  '# HELP python_gc_objects_collected_total Objects collected during gc\n# TYPE python_gc_objects_collected_total counter\npython_gc_objects_collected_total{generation="0"} 12034.0\n';

const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';

/** SGLang scheduler gauges for one scheduler (labels as the current collector sets them). */
function sglangScheduler(labels: Record<string, string>, v: { running: number; waiting: number; used: number }): Row[][] {
  return [[[labels, v.running]], [[labels, v.waiting]], [[labels, v.used]], [[labels, Math.round((v.used / 400000) * 10000) / 10000]]];
}

function sglangMetrics(schedulers: Array<{ labels: Record<string, string>; running: number; waiting: number; used: number }>): string {
  const rows = schedulers.map((s) => sglangScheduler(s.labels, s));
  const pick = (i: number): Row[] => rows.flatMap((r) => r[i]!);
  return (
    PROCESS +
    gauge('sglang:num_running_reqs', 'The number of running requests.', pick(0)) +
    gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', pick(1)) +
    gauge('sglang:num_used_tokens', 'The number of used tokens.', pick(2)) +
    gauge('sglang:token_usage', 'The token usage.', pick(3)) +
    gauge(
      'sglang:gen_throughput',
      'The generation throughput (token/s).',
      schedulers.map((s) => [s.labels, 1523.45] as const),
    ) +
    gauge(
      'sglang:cache_hit_rate',
      'The prefix cache hit rate.',
      schedulers.map((s) => [s.labels, 0.6123] as const),
    ) +
    counter('sglang:prompt_tokens', 'Number of prefill tokens processed.', [[{ model_name: MODEL }, 1234567]]) +
    histogram('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', { model_name: MODEL })
  );
}

const sched = (dp: number | null, tp: number, pp: number) => ({
  ...(dp === null ? {} : { dp_rank: String(dp) }),
  engine_type: 'unified',
  model_name: MODEL,
  moe_ep_rank: '0',
  pp_rank: String(pp),
  tp_rank: String(tp),
});

function vllmMetrics(opts: { engines: Array<{ running: number; waiting: number; usage: number }>; legacy: boolean }): string {
  const l = (i: number): Record<string, string> => (opts.legacy ? { model_name: MODEL } : { engine: String(i), model_name: MODEL });
  const rows = (f: (e: { running: number; waiting: number; usage: number }) => number): Row[] => opts.engines.map((e, i) => [l(i), f(e)]);
  const usage = opts.legacy ? 'vllm:gpu_cache_usage_perc' : 'vllm:kv_cache_usage_perc';
  const prefix = opts.legacy ? 'vllm:gpu_prefix_cache' : 'vllm:prefix_cache';
  const info = opts.engines.map(
    (_, i) =>
      [
        {
          ...(opts.legacy ? {} : { engine: String(i) }),
          block_size: '16',
          cache_dtype: 'auto',
          enable_prefix_caching: 'True',
          gpu_memory_utilization: '0.9',
          num_cpu_blocks: '2048',
          num_gpu_blocks: opts.legacy ? '8192' : '29205',
        },
        1,
      ] as const,
  );
  return (
    PROCESS +
    (opts.legacy
      ? gauge(
          'vllm:num_requests_swapped',
          'Number of requests swapped to CPU.',
          rows(() => 0),
        )
      : '') +
    gauge(
      'vllm:num_requests_running',
      'Number of requests in model execution batches.',
      rows((e) => e.running),
    ) +
    gauge(
      'vllm:num_requests_waiting',
      'Number of requests waiting to be processed.',
      rows((e) => e.waiting),
    ) +
    gauge(
      usage,
      'KV-cache usage. 1 means 100 percent usage.',
      rows((e) => e.usage),
    ) +
    counter(
      `${prefix}_queries`,
      'Prefix cache queries, in terms of number of queried tokens.',
      rows(() => 88000),
    ) +
    counter(
      `${prefix}_hits`,
      'Prefix cache hits, in terms of number of cached tokens.',
      rows(() => 61000),
    ) +
    gauge('vllm:cache_config_info', 'Information of the LLMEngine CacheConfig', info) +
    histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', l(0))
  );
}

const v1Loads = (loads: Array<Record<string, number>>) => ({
  timestamp: '2025-11-03T10:15:02.123456+00:00',
  version: '0.5.4',
  accelerator: 'NVIDIA H100 80GB HBM3',
  num_accelerators: 1,
  loads: loads.map((l) => ({ token_usage: 0.3, gen_throughput: 1523.45, cache_hit_rate: 0.6123, utilization: 0.0469, ...l })),
});

// ------------------------------------------------------------ the table

type Route = { status: number; body: string };
const json = (body: unknown, status = 200): Route => ({ status, body: JSON.stringify(body) });
const text = (body: string): Route => ({ status: 200, body });
const NOT_FOUND: Route = { status: 404, body: '{"detail":"Not Found"}' };

interface Expected {
  source: LoadSource;
  shape: LoadShape;
  ranks: number;
  waiting: number;
  running: number;
  usedTokens: number | null;
  totalTokens: number | null;
  maxTotalTokens: number | null;
  maxRunningRequests: number | null;
  waitingUncachedTokens: number | null;
}

interface Case {
  name: string;
  routes: Partial<Record<LoadSource, Route>>;
  want: Expected;
}

const sgl01 = {
  dp_rank: 0,
  num_running_reqs: 12,
  num_waiting_reqs: 3,
  num_waiting_uncached_tokens: 2048,
  num_used_tokens: 120000,
  num_total_tokens: 126000,
  max_total_num_tokens: 400000,
  max_running_requests: 256,
};
const sgl11 = {
  dp_rank: 1,
  num_running_reqs: 10,
  num_waiting_reqs: 5,
  num_waiting_uncached_tokens: 4096,
  num_used_tokens: 100000,
  num_total_tokens: 110500,
  max_total_num_tokens: 400000,
  max_running_requests: 256,
};
const none = { usedTokens: null, totalTokens: null, maxTotalTokens: null, maxRunningRequests: null, waitingUncachedTokens: null };

const CASES: Case[] = [
  {
    name: 'SGLang current: /v1/loads, DP 2 (the /get_load shim and /metrics also answer)',
    routes: {
      v1_loads: json(v1Loads([sgl01, sgl11])),
      get_load: json([{ dp_rank: 0, num_reqs: 15, num_waiting_reqs: 3, num_tokens: 126000, num_pending_tokens: 6000, ts_tic: 81234.567 }]),
      metrics: text(sglangMetrics([{ labels: sched(0, 0, 0), running: 1, waiting: 1, used: 1 }])),
    },
    want: {
      source: 'v1_loads',
      shape: 'sglang_v1_loads',
      ranks: 2,
      waiting: 8,
      running: 22,
      usedTokens: 220000,
      totalTokens: 236500,
      maxTotalTokens: 800000,
      maxRunningRequests: 512,
      waitingUncachedTokens: 6144,
    },
  },
  {
    name: 'SGLang current /get_load shim, /v1/loads failing: num_tokens is used + pending',
    routes: {
      v1_loads: { status: 500, body: 'Internal Server Error' },
      get_load: json([
        { dp_rank: 0, num_reqs: 15, num_waiting_reqs: 3, num_tokens: 126000, num_pending_tokens: 6000, ts_tic: 81234.567 },
        { dp_rank: 1, num_reqs: 10, num_waiting_reqs: 0, num_tokens: 90000, num_pending_tokens: 0, ts_tic: 81234.568 },
      ]),
    },
    want: {
      source: 'get_load',
      shape: 'sglang_get_load',
      ranks: 2,
      waiting: 3,
      running: 22,
      ...none,
      usedTokens: 210000,
      totalTokens: 216000,
    },
  },
  {
    name: 'SGLang mid-2025: /get_load array, no /metrics',
    routes: {
      v1_loads: NOT_FOUND,
      get_load: json([
        { dp_rank: 0, num_reqs: 7, num_waiting_reqs: 2, num_tokens: 5321 },
        { dp_rank: 1, num_reqs: 4, num_waiting_reqs: 0, num_tokens: 2100 },
      ]),
      metrics: NOT_FOUND,
    },
    want: { source: 'get_load', shape: 'sglang_get_load', ranks: 2, waiting: 2, running: 9, ...none, totalTokens: 7421 },
  },
  {
    name: 'SGLang early-2025: /get_load {"load": N} with /metrics on',
    routes: {
      v1_loads: NOT_FOUND,
      get_load: json({ load: 9 }),
      metrics: text(sglangMetrics([{ labels: { model_name: MODEL }, running: 6, waiting: 4, used: 30000 }])),
    },
    want: { source: 'metrics', shape: 'sglang_metrics', ranks: 1, waiting: 4, running: 6, ...none, usedTokens: 30000 },
  },
  {
    name: 'SGLang /metrics only, DP 2',
    routes: {
      v1_loads: NOT_FOUND,
      get_load: NOT_FOUND,
      metrics: text(
        sglangMetrics([
          { labels: sched(0, 0, 0), running: 8, waiting: 1, used: 50000 },
          { labels: sched(1, 0, 0), running: 9, waiting: 6, used: 61000 },
        ]),
      ),
    },
    want: { source: 'metrics', shape: 'sglang_metrics', ranks: 2, waiting: 7, running: 17, ...none, usedTokens: 111000 },
  },
  {
    name: 'SGLang TP 2 with --enable-metrics-for-all-schedulers: tp_rank 0 only',
    routes: {
      v1_loads: NOT_FOUND,
      get_load: NOT_FOUND,
      metrics: text(
        sglangMetrics([
          { labels: sched(null, 0, 0), running: 20, waiting: 7, used: 90000 },
          { labels: sched(null, 1, 0), running: 20, waiting: 7, used: 90000 },
        ]),
      ),
    },
    want: { source: 'metrics', shape: 'sglang_metrics', ranks: 1, waiting: 7, running: 20, ...none, usedTokens: 90000 },
  },
  {
    name: 'SGLang TP 2 × PP 2, all schedulers: the tp_rank 0, pp_rank 0 scheduler only',
    routes: {
      v1_loads: NOT_FOUND,
      get_load: NOT_FOUND,
      metrics: text(
        sglangMetrics([
          { labels: sched(null, 1, 1), running: 20, waiting: 7, used: 45000 },
          { labels: sched(null, 0, 1), running: 20, waiting: 7, used: 45000 },
          { labels: sched(null, 1, 0), running: 20, waiting: 7, used: 45100 },
          { labels: sched(null, 0, 0), running: 20, waiting: 7, used: 45100 },
        ]),
      ),
    },
    want: { source: 'metrics', shape: 'sglang_metrics', ranks: 1, waiting: 7, running: 20, ...none, usedTokens: 45100 },
  },
  {
    name: 'SGLang DP attention 2 × TP 2, all schedulers: each DP rank counted once, at its lowest tp_rank',
    routes: {
      v1_loads: NOT_FOUND,
      get_load: NOT_FOUND,
      metrics: text(
        sglangMetrics([
          { labels: sched(0, 0, 0), running: 5, waiting: 2, used: 1000 },
          { labels: sched(0, 1, 0), running: 5, waiting: 2, used: 1000 },
          { labels: sched(1, 2, 0), running: 3, waiting: 4, used: 2000 },
          { labels: sched(1, 3, 0), running: 3, waiting: 4, used: 2000 },
        ]),
      ),
    },
    want: { source: 'metrics', shape: 'sglang_metrics', ranks: 2, waiting: 6, running: 8, ...none, usedTokens: 3000 },
  },
  {
    name: 'vLLM current (v1 engine, DP 2): kv_cache_usage_perc, capacity from cache_config_info',
    routes: {
      v1_loads: NOT_FOUND,
      get_load: NOT_FOUND,
      metrics: text(
        vllmMetrics({
          legacy: false,
          engines: [
            { running: 4, waiting: 2, usage: 0.25 },
            { running: 3, waiting: 0, usage: 0.5 },
          ],
        }),
      ),
    },
    want: {
      source: 'metrics',
      shape: 'vllm_metrics',
      ranks: 2,
      waiting: 2,
      running: 7,
      ...none,
      usedTokens: 116820 + 233640,
      maxTotalTokens: 2 * 29205 * 16,
    },
  },
  {
    name: 'vLLM older names: gpu_cache_usage_perc, no engine label',
    routes: {
      v1_loads: NOT_FOUND,
      get_load: NOT_FOUND,
      metrics: text(vllmMetrics({ legacy: true, engines: [{ running: 3, waiting: 5, usage: 0.125 }] })),
    },
    want: {
      source: 'metrics',
      shape: 'vllm_metrics',
      ranks: 1,
      waiting: 5,
      running: 3,
      ...none,
      usedTokens: 16384,
      maxTotalTokens: 8192 * 16,
    },
  },
];

// ------------------------------------------------------------ HTTP plumbing

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function engine(routes: Partial<Record<LoadSource, Route>>): Promise<string> {
  const byPath = new Map<string, Route>();
  for (const source of LOAD_SOURCES) {
    const r = routes[source];
    if (r) byPath.set(LOAD_ENDPOINTS[source], r);
  }
  byPath.set('/v1/models', json({ object: 'list', data: [{ id: MODEL, object: 'model', owned_by: 'sglang' }] }));
  const server = createServer((req, res) => {
    const r = byPath.get((req.url ?? '/').split('?')[0]!) ?? NOT_FOUND;
    res
      .writeHead(r.status, {
        'content-type': r.body.startsWith('{') || r.body.startsWith('[') ? 'application/json' : 'text/plain; version=0.0.4; charset=utf-8',
      })
      .end(r.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The router's own sampler and table, polling once. */
async function sample(url: string) {
  const table = new LoadTable(5000);
  const worker = { id: url, url, slot: 0, inflight: 0 } as unknown as Worker;
  table.register(worker);
  table.setInPool(worker, true);
  const statuses: SampleStatus[] = [];
  const sampler = new LoadSampler(table, { intervalMs: 1000, timeoutMs: 2000, now: () => 0, onStatus: (_w, s) => statuses.push(s) });
  sampler.add(worker);
  try {
    await sampler.poll(worker);
  } finally {
    await sampler.stop();
  }
  const view = table.view(1);
  return { basic: view.basic(worker), native: view.native(worker), status: statuses[0], stats: sampler.stats(worker) };
}

describe('one reader for every engine load shape: reader, sampler and probe agree', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { want } = c;
    // 1. The reader itself, on the body of the endpoint that should win.
    const read = readLoadReply(want.source, c.routes[want.source]!.body);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.shape).toBe(want.shape);
    const { source, shape, ...numbers } = want;
    expect(summarizeLoad(read.readings)).toEqual(numbers);

    const url = await engine(c.routes);
    // 2. check-config --probe.
    const report = await probeWorkers([url], { ...defaultConfig(), workerQueueLimit: 4 });
    const probe = report.workers[0]!;
    expect(probe.load).toEqual({ endpoint: LOAD_ENDPOINTS[source], shape, ...numbers });
    // The gate will see this engine's queue, so the probe must not predict a blind gate.
    expect(report.warnings.map((w) => w.code)).not.toContain('RCTL_W_PROBE_NO_LOAD');
    expect(probe.dpSize).toBe(want.ranks);

    // 3. The router's sampler and load table.
    const s = await sample(url);
    expect(s.status).toEqual({ ok: true, source, shape });
    expect(s.basic).toMatchObject({
      waiting: want.waiting,
      running: want.running,
      usedTokens: want.usedTokens ?? 0,
      maxTotalTokens: want.maxTotalTokens ?? 0,
    });
    const capacity = want.totalTokens !== null && want.maxTotalTokens !== null && want.maxRunningRequests !== null;
    if (capacity) {
      expect(s.native).toMatchObject({
        totalTokens: want.totalTokens,
        maxRunningRequests: want.maxRunningRequests,
        maxTotalTokens: want.maxTotalTokens,
      });
    } else {
      expect(s.native).toBeUndefined();
    }
    expect(s.stats.failuresTotal).toBe(0);

    // 4. What an operator reads of it in /admin/state, over HTTP from a router polling it.
    const router = await startTestRouter([url], { modelId: MODEL });
    try {
      const worker = await eventually(async () => {
        const doc = (await (await fetch(`${router.url}/admin/state`)).json()) as AdminState;
        const w = doc.workers[0]!;
        return w.fresh ? w : undefined;
      });
      expect(worker).toMatchObject({ waiting: want.waiting, running: want.running, queued_tokens: want.waitingUncachedTokens });
    } finally {
      await router.close();
    }
  });

  it('a legacy {"load": N} alone: the probe names it, the sampler has no sample, both without a queue length', async () => {
    const url = await engine({ v1_loads: NOT_FOUND, get_load: json({ load: 9 }), metrics: NOT_FOUND });
    expect(readLoadReply('get_load', '{"load": 9}')).toMatchObject({ ok: false, shape: 'sglang_get_load_legacy' });
    const probe = await probeWorkers([url], { ...defaultConfig(), workerQueueLimit: 4 });
    expect(probe.workers[0]!.load).toMatchObject({ endpoint: '/get_load', shape: 'sglang_get_load_legacy', waiting: null, running: null });
    expect(probe.warnings.map((w) => w.code)).toContain('RCTL_W_PROBE_NO_LOAD');
    const s = await sample(url);
    expect(s.basic).toBeUndefined();
    expect(s.stats.failures.unreadable).toBe(1);
    expect(s.stats.lastError?.message).toContain('legacy');
  });

  it('unreadable variants are refused whole, never partly summed or zero-filled', () => {
    const bad: Array<[LoadSource, string]> = [
      ['v1_loads', '{"loads": []}'],
      ['v1_loads', '{"loads": [{"dp_rank": 0, "num_running_reqs": 1}]}'],
      [
        'v1_loads',
        '{"loads": [{"dp_rank": 0, "num_running_reqs": 1, "num_waiting_reqs": 2}, {"dp_rank": 0, "num_running_reqs": 1, "num_waiting_reqs": 2}]}',
      ],
      [
        'v1_loads',
        `{"loads": [${Array.from({ length: 1025 }, (_, i) => `{"dp_rank": ${i}, "num_running_reqs": 0, "num_waiting_reqs": 0}`).join(',')}]}`,
      ],
      ['get_load', '[{"dp_rank": 0, "num_reqs": 1, "num_waiting_reqs": 3}]'],
      ['get_load', '[{"dp_rank": 0, "num_reqs": 3, "num_tokens": 100}]'],
      ['get_load', 'not json'],
      ['metrics', 'sglang:num_queue_reqs{dp_rank="0"} 3.0\n'],
      ['metrics', 'vllm:num_requests_waiting{engine="x"} 1.0\nvllm:num_requests_running{engine="x"} 1.0\n'],
      ['metrics', '# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.0\n'],
    ];
    for (const [source, body] of bad) expect(readLoadReply(source, body).ok, `${source}: ${body.slice(0, 80)}`).toBe(false);
  });
});
