import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { parsePrometheusText } from '../../src/prometheus/index.js';
import type { ParsedFamily } from '../../src/prometheus/index.js';
import { eventually, getJson, post, rawRequest } from '../helpers/http.js';

/**
 * /metrics as the engines' Python prometheus_client writes it, checked against the
 * captures under test/prometheus/fixtures (docs/simulator.md §/metrics).
 */
let fleet: SimFleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const PY_FLOAT = /^(-?\d+\.\d+(e[+-]\d+)?|-?\d(\.\d+)?e[+-]\d+|\+Inf|-Inf|NaN)$/;

interface Line {
  name: string;
  keys: string[];
  value: string;
}

function sampleLines(text: string): Line[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) throw new Error(`unexpected line: ${l}`);
      const keys = m[2] ? [...m[2].matchAll(/([a-z_]+)="/g)].map((k) => k[1]!) : [];
      return { name: m[1]!, keys, value: m[3]! };
    });
}

/** For every family both texts have: same type, same HELP, same label names per series name. */
function sameSpelling(fixture: Map<string, ParsedFamily>, ours: Map<string, ParsedFamily>): string[] {
  const shared = [...fixture.keys()].filter((k) => ours.has(k));
  const keysOf = (f: ParsedFamily) => new Map(f.samples.map((s) => [s.name, Object.keys(s.labels).sort().join(',')]));
  const problems: string[] = [];
  for (const name of shared) {
    const a = fixture.get(name)!;
    const b = ours.get(name)!;
    if (a.type !== b.type) problems.push(`${name}: type ${b.type}, real ${a.type}`);
    if (a.help !== b.help) problems.push(`${name}: help "${b.help}", real "${a.help}"`);
    const ka = keysOf(a);
    for (const [series, keys] of keysOf(b)) {
      if (ka.has(series) && ka.get(series) !== keys) problems.push(`${series}: labels ${keys}, real ${ka.get(series)}`);
    }
  }
  return shared.length === 0 ? ['no family in common'] : problems;
}

async function traffic(url: string, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      post(`${url}/v1/chat/completions`, {
        messages: [{ role: 'user', content: `metrics request ${i}` }],
        max_tokens: 4,
        ignore_eos: true,
      }),
    ),
  );
}

describe('SGLang flavour /metrics', () => {
  it('is prometheus_client text: sorted labels, Python floats, _total counters with _created, the real buckets', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, dpSize: 2, speedup: 50 });
    const url = fleet.urls[0]!;
    await traffic(url, 5);
    const text = (await rawRequest(`${url}/metrics`)).text;
    const lines = sampleLines(text);
    for (const l of lines) {
      expect(l.keys).toEqual([...l.keys].sort());
      expect(l.value).toMatch(PY_FLOAT);
    }
    const errors: string[] = [];
    const families = parsePrometheusText(text, { onError: (_n, t) => errors.push(t) });
    expect(errors).toEqual([]);
    for (const f of families.values()) {
      if (f.type !== 'counter') continue;
      expect(f.name).toMatch(/_total$/);
      expect(families.get(f.name.replace(/_total$/, '_created'))?.type).toBe('gauge');
    }
    const buckets = [...text.matchAll(/^sglang:time_to_first_token_seconds_bucket\{le="([^"]+)"/gm)].map((m) => m[1]);
    expect(buckets).toEqual([
      '0.1',
      '0.2',
      '0.4',
      '0.6',
      '0.8',
      '1.0',
      '2.0',
      '4.0',
      '6.0',
      '8.0',
      '10.0',
      '20.0',
      '40.0',
      '60.0',
      '80.0',
      '100.0',
      '200.0',
      '400.0',
      '+Inf',
    ]);
    // One tokenizer serves both ranks: its counters carry model_name only.
    expect(families.get('sglang:num_requests_total')!.samples.map((s) => s.labels)).toEqual([{ model_name: 'sim-llama-3.1-8b' }]);
    expect(families.get('sglang:num_requests_total')!.samples[0]!.value).toBe(5);
    expect(families.get('sglang:time_to_first_token_seconds')!.samples.find((s) => s.name.endsWith('_count'))!.value).toBe(5);
    expect(families.get('sglang:num_queue_reqs')!.samples.map((s) => s.labels.dp_rank)).toEqual(['0', '1']);
    expect(Object.keys(families.get('sglang:num_queue_reqs')!.samples[0]!.labels).sort()).toEqual([
      'dp_rank',
      'engine_type',
      'model_name',
      'moe_ep_rank',
      'pp_rank',
      'tp_rank',
    ]);
    const fixture = parsePrometheusText(readFileSync(new URL('../prometheus/fixtures/sglang-engine-metrics.txt', import.meta.url), 'utf8'));
    expect(sameSpelling(fixture, families)).toEqual([]);
  });
});

describe('vLLM flavour /metrics', () => {
  it('is prometheus_client text with vLLM names, labels engine and model_name, and the KV capacity in cache_config_info', async () => {
    fleet = await startSimFleet({ workers: 1, portBase: 0, flavor: 'vllm', speedup: 50, kvBlocks: 4096 });
    const url = fleet.urls[0]!;
    await traffic(url, 3);
    const text = (await rawRequest(`${url}/metrics`)).text;
    for (const l of sampleLines(text)) {
      expect(l.keys).toEqual([...l.keys].sort());
      expect(l.value).toMatch(PY_FLOAT);
    }
    const families = parsePrometheusText(text);
    const buckets = [...text.matchAll(/^vllm:time_to_first_token_seconds_bucket\{engine="0",le="([^"]+)"/gm)].map((m) => m[1]);
    expect(buckets).toEqual([
      '0.001',
      '0.005',
      '0.01',
      '0.02',
      '0.04',
      '0.06',
      '0.08',
      '0.1',
      '0.25',
      '0.5',
      '0.75',
      '1.0',
      '2.5',
      '5.0',
      '7.5',
      '10.0',
      '20.0',
      '40.0',
      '80.0',
      '160.0',
      '640.0',
      '2560.0',
      '+Inf',
    ]);
    expect(families.get('vllm:cache_config_info')!.samples[0]!.labels).toMatchObject({
      engine: '0',
      block_size: '16',
      num_gpu_blocks: '4096',
    });
    const success = families.get('vllm:request_success_total')!.samples;
    expect(success.find((s) => s.labels.finished_reason === 'length')!.value).toBe(3);
    expect(families.get('vllm:prompt_tokens_created')!.type).toBe('gauge');
    expect(families.get('vllm:request_queue_time_seconds')!.samples.find((s) => s.name.endsWith('_count'))!.value).toBe(3);
    const fixture = parsePrometheusText(readFileSync(new URL('../prometheus/fixtures/vllm-engine-metrics.txt', import.meta.url), 'utf8'));
    expect(sameSpelling(fixture, families)).toEqual([]);
  });
});

describe('/server_info and /v1/loads under each schedule policy', () => {
  it.each(['fcfs', 'lpm'] as const)(
    '%s: server_info reports the policy and the scheduler budgets; loads report capacity',
    async (policy) => {
      fleet = await startSimFleet({
        workers: 1,
        portBase: 0,
        speedup: 50,
        maxRunning: 8,
        maxTotalTokens: 4010,
        params: { schedulePolicy: policy, maxPrefillTokens: 4096, chunkedPrefillSize: 2048 },
      });
      const url = fleet.urls[0]!;
      for (const path of ['/server_info', '/get_server_info']) {
        expect(await getJson(`${url}${path}`)).toMatchObject({
          schedule_policy: policy,
          max_prefill_tokens: 4096,
          chunked_prefill_size: 2048,
          max_running_requests: 8,
          max_total_tokens: 4010,
          max_total_num_tokens: 4000, // whole 16-token pages
        });
      }
      const loads = (await getJson(`${url}/v1/loads`)) as { loads: Array<Record<string, number>> };
      expect(loads.loads[0]).toMatchObject({
        num_running_reqs: 0,
        num_waiting_reqs: 0,
        num_waiting_uncached_tokens: 0,
        num_used_tokens: 0,
        num_total_tokens: 0,
        max_total_num_tokens: 4000,
        max_running_requests: 8,
      });
    },
  );
});

describe('a full KV pool over HTTP', () => {
  it('num_total_tokens plus a queued prompt exceeds max_total_num_tokens while the head waits for memory', async () => {
    const clock = new ManualClock();
    fleet = await startSimFleet({ workers: 1, portBase: 0, clock, maxTotalTokens: 1_600 });
    const url = fleet.urls[0]!;
    const engine = fleet.servers[0]!.engine;
    const prompt = (tag: number) => Array.from({ length: 600 }, (_, k) => tag * 10_000 + k + 1);
    const replies = [1, 2, 3].map((tag) =>
      post(`${url}/generate`, { input_ids: prompt(tag), sampling_params: { max_new_tokens: 100, ignore_eos: true } }),
    );
    await eventually(async () => engine.inflight === 3);
    clock.advance(50); // past the arrival overhead and the first prefill step
    const [l] = ((await getJson(`${url}/v1/loads`)) as { loads: Array<Record<string, number>> }).loads;
    expect(l).toMatchObject({ num_running_reqs: 2, num_waiting_reqs: 1, max_total_num_tokens: 1_600 });
    expect(l!.num_used_tokens).toBeGreaterThanOrEqual(1_200);
    expect(l!.num_total_tokens).toBe(l!.num_used_tokens! + 600);
    expect(l!.num_total_tokens! + 600).toBeGreaterThan(l!.max_total_num_tokens!);
    clock.runUntilIdle();
    for (const r of await Promise.all(replies)) expect(r.status).toBe(200);
  });
});
