import { afterEach, describe, expect, it } from 'vitest';
import { startSimFleet } from '../../src/sim/index.js';
import type { SimFleet, SimFleetOptions } from '../../src/sim/index.js';
import { getJson, post, rawRequest } from '../helpers/http.js';

/**
 * The exact keys of every engine-owned JSON body the simulator serves, in its normal
 * mode and posing as SGLang (docs/simulator.md §Push channels, §Posing as SGLang).
 * Each key is traced to where the real engine writes it: the repository's notes on the
 * engines (docs/engine-push.md, docs/engine-load.md, sections named), or the engine's
 * source (sgl-project/sglang, vllm-project/vllm; files named). The simulator's control
 * routes (/sim/*) are its own and not checked here.
 */

let fleet: SimFleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const keys = (v: unknown): string[] => Object.keys(v as object).sort();
const sorted = (ks: readonly string[]): string[] => [...ks].sort();

/**
 * /server_info and /get_server_info: SGLang's get_server_info returns
 * `{**dataclasses.asdict(server_args), **scheduler_info, "internal_states": …, "version": …}`
 * (python/sglang/srt/entrypoints/http_server.py, get_server_info). The simulator
 * writes the server arguments a router reads, no others.
 */
const SERVER_INFO_KEYS = [
  // ServerArgs fields, as dataclasses.asdict(server_args) writes them (python/sglang/srt/server_args.py):
  'model_path', // --model-path
  'served_model_name', // --served-model-name
  'dp_size', // --dp-size; the router's required ranks (docs/engine-load.md §Introspection)
  'tp_size', // --tp-size
  'page_size', // --page-size (default 1)
  'max_running_requests', // --max-running-requests
  'max_total_tokens', // --max-total-tokens (None when unset)
  'chunked_prefill_size', // --chunked-prefill-size (default 8192)
  'max_prefill_tokens', // --max-prefill-tokens (default 16384)
  'schedule_policy', // --schedule-policy (default fcfs); the router's cache-aware test (docs/engine-load.md §Capacity and pressure)
  'radix_eviction_policy', // --radix-eviction-policy (lru)
  'load_balance_method', // --load-balance-method
  'stream_interval', // --stream-interval (1)
  'incremental_streaming_output', // --incremental-streaming-output (false)
  // --kv-events-config, the raw JSON string asdict() leaves it (docs/engine-push.md §The replay endpoint).
  'kv_events_config',
  // --load-publish-endpoint: auto | tcp://*:PORT | None (python/sglang/srt/disaggregation/kv_events.py, resolve_load_pub_range).
  'load_publish_endpoint',
  // scheduler_info, the scheduler's init result: the KV pool in tokens.
  'max_total_num_tokens',
  // describe_kv_events_publisher (python/sglang/srt/runtime_context.py; docs/engine-push.md §Discovery).
  'kv_events',
  // get_server_info itself: one get_internal_state per DP rank, and sglang.__version__.
  'internal_states',
  'version',
];

/** describe_kv_events_publisher's descriptor, exactly these keys (python/sglang/srt/runtime_context.py; docs/engine-push.md §Discovery). */
const KV_EVENTS_KEYS = ['publisher', 'endpoint_host', 'endpoint_port_base', 'topic', 'block_size', 'dp_size'];
/** Added by describe_kv_events_publisher iff resolve_load_pub_range resolved a load range (ibid.). */
const KV_EVENTS_LOAD_KEYS = ['load_endpoint_port_base', 'load_topic'];
/** KVEventsConfig fields (python/sglang/srt/disaggregation/kv_events.py; docs/engine-push.md §The replay endpoint) the simulator's argument names. */
const KV_EVENTS_CONFIG_KEYS = ['publisher', 'endpoint', 'replay_endpoint', 'topic', 'buffer_steps'];

/**
 * One internal_states entry: the scheduler's get_internal_state (SGLang
 * python/sglang/srt/managers/scheduler.py): `last_gen_throughput` and `memory_usage`
 * {weight, kvcache, token_capacity, cuda_graph}. SGLang also repeats its server
 * arguments there; the simulator leaves them out.
 */
const INTERNAL_STATE_KEYS = ['last_gen_throughput', 'memory_usage'];
const MEMORY_USAGE_KEYS = ['weight', 'kvcache', 'token_capacity', 'cuda_graph'];

/**
 * A /v1/models card: SGLang's ModelCard `{id, object: "model", created, owned_by, root, parent?, max_model_len}`
 * (python/sglang/srt/entrypoints/openai/protocol.py); `owned_by` names the engine (docs/engine-load.md §Introspection).
 */
const MODEL_CARD_KEYS = ['id', 'object', 'created', 'owned_by', 'root', 'max_model_len'];
/** The simulator's one marker, which no real engine writes (docs/simulator.md §Push channels): the normal mode's cards only. */
const MARKER = 'simulated';

/** /v1/loads (python/sglang/srt/entrypoints/v1_loads.py; docs/engine-load.md §SGLang `/v1/loads`). */
const V1_LOADS_KEYS = ['timestamp', 'version', 'accelerator', 'num_accelerators', 'loads'];
/** The core keys, always present, plus the `queues` and `memory` sections of include=all (python/sglang/srt/managers/load_snapshot.py). */
const V1_LOADS_ENTRY_KEYS = [
  'dp_rank',
  'num_running_reqs',
  'num_waiting_reqs',
  'num_waiting_uncached_tokens',
  'num_used_tokens',
  'num_total_tokens',
  'max_total_num_tokens',
  'max_running_requests',
  'token_usage',
  'gen_throughput',
  'cache_hit_rate',
  'utilization',
  'queues',
  'memory',
];
const V1_LOADS_QUEUES_KEYS = ['waiting', 'grammar', 'paused', 'retracted']; // load_snapshot.py, queues
const V1_LOADS_MEMORY_KEYS = ['weight_gb', 'kv_cache_gb', 'graph_gb', 'token_capacity']; // load_snapshot.py, memory
/** /get_load, the current array shape, a shim over /v1/loads (http_server.py get_load; docs/engine-load.md, "SGLang `/get_load`, array of ranks (mid-2025, and the current shim)"). */
const GET_LOAD_KEYS = ['dp_rank', 'num_reqs', 'num_waiting_reqs', 'num_tokens', 'num_pending_tokens', 'ts_tic'];
/** /generate, non-streaming (http_server.py generate_request; meta_info from python/sglang/srt/managers/tokenizer_manager.py). */
const GENERATE_KEYS = ['text', 'output_ids', 'meta_info'];
const META_INFO_KEYS = ['id', 'finish_reason', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'e2e_latency'];
/** OpenAI bodies (python/sglang/srt/entrypoints/openai/protocol.py; cached tokens: docs/decisions.md). */
const CHAT_KEYS = ['id', 'object', 'created', 'model', 'choices', 'usage'];
const CHAT_CHOICE_KEYS = ['index', 'message', 'logprobs', 'finish_reason'];
const COMPLETION_CHOICE_KEYS = ['index', 'text', 'logprobs', 'finish_reason'];
const USAGE_KEYS = ['prompt_tokens', 'completion_tokens', 'total_tokens', 'prompt_tokens_details'];

async function start(o: Partial<SimFleetOptions>): Promise<string> {
  fleet = await startSimFleet({ workers: 1, speedup: 50, ...o });
  return fleet.urls[0]!;
}

const PUSH_ON = { kvEvents: true, kvFormat: 'array', loadPublish: true, topic: 'kv' } as const;

describe.each([
  { mode: 'normal', asSglang: false },
  { mode: 'posing as SGLang', asSglang: true },
])('engine-owned JSON, $mode', ({ asSglang }) => {
  it('/server_info and /get_server_info have exactly SGLang keys, with kv events and load publishing on', async () => {
    const url = await start({ asSglang, dpSize: 2, push: PUSH_ON });
    for (const path of ['/server_info', '/get_server_info']) {
      const info = (await getJson(url + path)) as Record<string, unknown>;
      expect(keys(info)).toEqual(sorted(SERVER_INFO_KEYS));
      expect(info).not.toHaveProperty(MARKER); // the marker is in the model card only
      expect(keys(info.kv_events)).toEqual(sorted([...KV_EVENTS_KEYS, ...KV_EVENTS_LOAD_KEYS]));
      expect(typeof info.kv_events_config).toBe('string'); // raw, as asdict() keeps it
      expect(keys(JSON.parse(info.kv_events_config as string))).toEqual(sorted(KV_EVENTS_CONFIG_KEYS));
      expect(info.load_publish_endpoint).toBe('auto');
      const states = info.internal_states as unknown[];
      expect(states).toHaveLength(2);
      for (const s of states) {
        expect(keys(s)).toEqual(sorted(INTERNAL_STATE_KEYS));
        expect(keys((s as { memory_usage: unknown }).memory_usage)).toEqual(sorted(MEMORY_USAGE_KEYS));
      }
    }
  });

  it('/server_info without push channels: kv_events, kv_events_config and load_publish_endpoint are null', async () => {
    const url = await start({ asSglang });
    const info = (await getJson(`${url}/server_info`)) as Record<string, unknown>;
    expect(keys(info)).toEqual(sorted(SERVER_INFO_KEYS));
    expect(info).toMatchObject({ kv_events: null, kv_events_config: null, load_publish_endpoint: null });
  });

  it('kv events without load publishing: the descriptor has no load pair', async () => {
    const url = await start({ asSglang, push: { ...PUSH_ON, loadPublish: false } });
    const info = (await getJson(`${url}/server_info`)) as Record<string, unknown>;
    expect(keys(info.kv_events)).toEqual(sorted(KV_EVENTS_KEYS));
    expect(info.load_publish_endpoint).toBeNull();
  });

  it(`/v1/models cards ${asSglang ? 'have no marker' : 'carry the one marker'}`, async () => {
    const url = await start({ asSglang });
    const body = (await getJson(`${url}/v1/models`)) as { object: string; data: unknown[] };
    expect(keys(body)).toEqual(['data', 'object']);
    expect(keys(body.data[0])).toEqual(sorted(asSglang ? MODEL_CARD_KEYS : [...MODEL_CARD_KEYS, MARKER]));
  });

  it('/v1/loads, /get_load, /generate, /v1/chat/completions and /v1/completions', async () => {
    const url = await start({ asSglang });
    const loads = (await getJson(`${url}/v1/loads`)) as { loads: Array<Record<string, unknown>> };
    expect(keys(loads)).toEqual(sorted(V1_LOADS_KEYS));
    expect(keys(loads.loads[0])).toEqual(sorted(V1_LOADS_ENTRY_KEYS));
    expect(keys(loads.loads[0]!.queues)).toEqual(sorted(V1_LOADS_QUEUES_KEYS));
    expect(keys(loads.loads[0]!.memory)).toEqual(sorted(V1_LOADS_MEMORY_KEYS));
    if (asSglang) expect(loads).toMatchObject({ version: '0.5.19', accelerator: 'NVIDIA H100 80GB HBM3' });

    const getLoad = (await getJson(`${url}/get_load`)) as unknown[];
    expect(keys(getLoad[0])).toEqual(sorted(GET_LOAD_KEYS));

    const gen = (await post(`${url}/generate`, { input_ids: [1, 2, 3], sampling_params: { max_new_tokens: 2 } })).json() as Record<
      string,
      unknown
    >;
    expect(keys(gen)).toEqual(sorted(GENERATE_KEYS));
    expect(keys(gen.meta_info)).toEqual(sorted(META_INFO_KEYS));

    const chat = (
      await post(`${url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 })
    ).json() as Record<string, unknown>;
    expect(keys(chat)).toEqual(sorted(CHAT_KEYS));
    expect(keys((chat.choices as unknown[])[0])).toEqual(sorted(CHAT_CHOICE_KEYS));
    expect(keys(chat.usage)).toEqual(sorted(USAGE_KEYS));

    const cmpl = (await post(`${url}/v1/completions`, { prompt: 'hi', max_tokens: 2 })).json() as Record<string, unknown>;
    expect(keys(cmpl)).toEqual(sorted(CHAT_KEYS));
    expect(keys((cmpl.choices as unknown[])[0])).toEqual(sorted(COMPLETION_CHOICE_KEYS));
  });
});

describe('engine-owned JSON, vLLM flavour', () => {
  it('/v1/models carries the marker (vLLM has no /server_info to say it), /load is {server_load}', async () => {
    const url = await start({ flavor: 'vllm' });
    const body = (await getJson(`${url}/v1/models`)) as { data: unknown[] };
    // vLLM's ModelCard (vllm/entrypoints/openai/protocol.py) has SGLang's keys (and `permission`), plus the marker no engine writes.
    expect(keys(body.data[0])).toEqual(sorted([...MODEL_CARD_KEYS, MARKER]));
    // vllm/entrypoints/openai/api_server.py: GET /load → {"server_load": <int>} (docs/engine-load.md §Which endpoint).
    expect(keys(await getJson(`${url}/load`))).toEqual(['server_load']);
    expect((await rawRequest(`${url}/server_info`)).status).toBe(404);
  });

  it('refuses to pose as SGLang, and a tokenizer without the pose', async () => {
    await expect(startSimFleet({ workers: 1, flavor: 'vllm', asSglang: true })).rejects.toThrow(/asSglang poses as SGLang/);
    const tokenizer = { encodeChat: () => [1], encodeText: () => [1] };
    await expect(startSimFleet({ workers: 1, tokenizer })).rejects.toThrow(/only taken with asSglang/);
  });
});
