import OpenAI from 'openai';
import { afterEach, expect, it } from 'vitest';
import { LLM_D_SIM_TOKENIZER, LlmdSimTokenizer } from '../../src/tokenizer/index.js';
import { runCli } from '../helpers/cli.js';
import type { RunningCli } from '../helpers/cli.js';
import { eventually, rawRequest } from '../helpers/http.js';
import { kvEventsFor, startLlmdSims } from '../helpers/llm-d-sim.js';
import type { LlmdSim, LlmdSimOptions } from '../helpers/llm-d-sim.js';
import { adminState, decisionOf, sharedBlocks } from '../helpers/peer-router.js';
import { chat, direct, eventsApplied, eventsLive, eventsOf, startRoutedFleet } from '../helpers/llm-d-fleet.js';
import { describeWithPeers } from '../helpers/peers.js';

/**
 * routerctl in front of three real llm-d-inference-sim engines (docs/peers.md): the
 * simulator llm-d's own end-to-end tests and endpoint picker run against, written by
 * others. Where a request went is read from each engine's own request log (a marker in
 * the prompt), how it was booked from the router's decision records, and what the
 * engine reused from its own `usage.prompt_tokens_details.cached_tokens`.
 */
let sims: LlmdSim[] = [];
let routers: RunningCli[] = [];

afterEach(async () => {
  for (const r of routers) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
  routers = [];
});

async function fleet(o: LlmdSimOptions, routerArgs: string[] = []): Promise<{ url: string; client: OpenAI; sims: LlmdSim[] }> {
  const started = await startRoutedFleet(3, o, routerArgs);
  sims = started.sims;
  routers.push(started.cli);
  return started;
}

const state = adminState;
const recordOf = decisionOf;

/** The engine's own tokens for a chat (its /tokenize), the oracle for what it can reuse. */
async function engineTokens(sim: LlmdSim, messages: OpenAI.Chat.ChatCompletionMessageParam[]): Promise<number[]> {
  const res = await fetch(`${sim.url}/tokenize`, { method: 'POST', body: JSON.stringify({ model: 'tiny', messages }) });
  return ((await res.json()) as { tokens: number[] }).tokens;
}

describeWithPeers(['llm-d-inference-sim'], 'routerctl in front of llm-d-inference-sim', () => {
  it('serve admits them from what they serve, and check-config --probe says how each reports load and where its events come from', async () => {
    const { url, client } = await fleet({});
    const probe = await runCli([
      'check-config',
      '--worker-urls',
      ...sims.map((s) => s.url),
      '--worker-queue-limit',
      '2',
      '--kv-events',
      kvEventsFor(sims),
      '--tokenizer',
      LLM_D_SIM_TOKENIZER,
      '--probe',
      '--json',
    ]);
    expect(probe.code, probe.stderr).toBe(0);
    const report = JSON.parse(probe.stdout) as { probe: { workers: Array<Record<string, unknown>> }; warnings: Array<{ code: string }> };
    for (const w of report.probe.workers) {
      expect(w).toMatchObject({ reachable: true, engine: 'vllm', models: ['tiny'], simulated: false, dpSize: 1 });
      // The gate can see it: its queue comes from vLLM's /metrics names.
      expect(w.load).toMatchObject({ endpoint: '/metrics', waiting: 0 });
      expect(w.push).toMatchObject({ kvEvents: true, blockSize: 16, from: 'config', bind: true, scheme: 'tokens' });
    }
    expect(report.warnings.map((x) => x.code)).not.toContain('RCTL_W_PROBE_NO_LOAD');
    const human = await runCli(['check-config', '--worker-urls', sims[0]!.url, '--kv-events', kvEventsFor([sims[0]!]), '--probe']);
    expect(human.stdout).toMatch(/reachable\s+vllm\s+models: tiny\s+load: \/metrics \(waiting 0\)\s+load by poll/);
    expect(human.stdout).toContain('(bound by the router: the engine connects)');

    const s = await state(url);
    expect(s.router.simulated).toBe(false);
    expect(s.router.model_id).toBe('tiny');
    expect(s.prefix_index.source).toBe('events');
    for (const w of s.workers) {
      expect(w).toMatchObject({ healthy: true, load_source: 'poll', waiting: 0, running: 0, fresh: true });
      expect(w.kv_events).toMatchObject({ keying: 'tokens', block_size: 16, endpoints_from: 'config' });
    }
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['tiny']);
    // Both shapes through the router, with the engine's own usage.
    const whole = await client.chat.completions.create({ model: 'tiny', messages: chat('admit', 'mk-admit-1'), max_tokens: 4 });
    expect(whole.usage!.prompt_tokens).toBeGreaterThan(400);
    const stream = await client.chat.completions.create({
      model: 'tiny',
      messages: chat('admit', 'mk-admit-2'),
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage!.prompt_tokens).toBe(whole.usage!.prompt_tokens);
    expect(sims.reduce((n, x) => n + x.received('mk-admit-1') + x.received('mk-admit-2'), 0)).toBe(2);
  }, 60_000);

  it("keys prompts with the engine's own token ids: --tokenizer llm-d-inference-sim:dummy against its /tokenize", async () => {
    sims = await startLlmdSims(1);
    const tok = new LlmdSimTokenizer();
    const texts = [
      'Hello, world! How are you?',
      'snake_case and kebab-case -- __dunder__ a_b-c',
      'tabs\tand\nnew lines\r\n  and   runs of spaces  ',
      'punctuation: {}[]()<>=+*&^%$#@!~/\\|`;:\'" ,.?',
      'Ünïcödé wörds, 日本語のテキスト, emoji 🚀 and ascii mixed_in',
      'numbers 3.14159 1e-9 0x1F 100%',
      '',
    ];
    for (const prompt of texts) {
      const res = await fetch(`${sims[0]!.url}/tokenize`, { method: 'POST', body: JSON.stringify({ model: 'tiny', prompt }) });
      const body = (await res.json()) as { tokens: number[] };
      expect([...tok.encodeText(prompt)], JSON.stringify(prompt)).toEqual(body.tokens ?? []);
    }
    const chats: OpenAI.Chat.ChatCompletionMessageParam[][] = [
      chat('tok', 'mk-tok'),
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'first part' },
            { type: 'text', text: 'second: part' },
          ],
        },
      ],
      [
        { role: 'system', content: 'You call tools.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny, 21 C' },
      ],
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'http://127.0.0.1/cat.png' } },
          ],
        },
      ],
    ];
    for (const messages of chats)
      expect([...tok.keyChat(messages as never)], JSON.stringify(messages)).toEqual(await engineTokens(sims[0]!, messages));
  }, 30_000);

  it('their KV events feed the index: a prefix each engine got directly is routed back to it, booked cache_hit, and the engine reports the reuse', async () => {
    const { url, client } = await fleet({});
    // Five prefixes, each stored on one engine by a request sent to it directly: only its
    // KV events can tell the router. A router that ignored them would land on the owner
    // one time in three, and the engine would report no cached tokens.
    const owners = [0, 1, 2, 0, 1];
    for (const [i, o] of owners.entries()) {
      const before = await eventsOf(url, sims[o]!);
      await direct(sims[o]!, chat(`kv${i}`, `mk-warm-${i}`));
      await eventsApplied(url, sims[o]!, before);
    }
    for (const [i, o] of owners.entries()) {
      const marker = `mk-routed-${i}`;
      const messages = chat(`kv${i}`, marker);
      // What the owner can reuse, by its own tokenizer: the blocks the two prompts share.
      const blocks = sharedBlocks(await engineTokens(sims[o]!, chat(`kv${i}`, `mk-warm-${i}`)), await engineTokens(sims[o]!, messages), 16);
      expect(blocks).toBeGreaterThan(20);
      const { data, response } = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 2 }).withResponse();
      // The engine's own log: the request reached the owner and no other engine.
      expect(sims.map((s) => s.received(marker))).toEqual(sims.map((_, j) => (j === o ? 1 : 0)));
      // The engine's own word: it reused exactly those blocks.
      expect(data.usage!.prompt_tokens_details!.cached_tokens).toBe(blocks * 16);
      // The router matched exactly as many from the engine's events, keyed by its own tokenizer.
      const rec = await recordOf(url, response.headers.get('x-request-id'));
      expect(rec).toMatchObject({ decision: 'cache_hit', worker: sims[o]!.url, matched_blocks: blocks });
      expect(rec.cached_tokens).toBe(blocks * 16);
    }
    const s = await state(url);
    for (const w of s.workers)
      expect(w.kv_events).toMatchObject({ unplaced_blocks_total: 0, unkeyed_blocks_total: 0, decode_errors_total: 0 });
  }, 60_000);

  it('reads both of its event formats: positional arrays and vLLM maps', async () => {
    const { url, client } = await fleet({ mapEvents: true });
    const before = await eventsOf(url, sims[2]!);
    await direct(sims[2]!, chat('maps', 'mk-maps-warm'));
    await eventsApplied(url, sims[2]!, before);
    const blocks = sharedBlocks(
      await engineTokens(sims[2]!, chat('maps', 'mk-maps-warm')),
      await engineTokens(sims[2]!, chat('maps', 'mk-maps-routed')),
      16,
    );
    const { data, response } = await client.chat.completions
      .create({ model: 'tiny', messages: chat('maps', 'mk-maps-routed'), max_tokens: 2 })
      .withResponse();
    expect(sims.map((s) => s.received('mk-maps-routed'))).toEqual([0, 0, 1]);
    expect(data.usage!.prompt_tokens_details!.cached_tokens).toBe(blocks * 16);
    expect(await recordOf(url, response.headers.get('x-request-id'))).toMatchObject({ decision: 'cache_hit', matched_blocks: blocks });
  }, 60_000);

  it('an engine restart, its batches numbered from 1 again, makes the router forget what it held and learn it anew', async () => {
    const { url, client } = await fleet({});
    const [a] = sims as [LlmdSim];
    const before = await eventsOf(url, a);
    await direct(a, chat('restart', 'mk-restart-warm'));
    await eventsApplied(url, a, before);
    const first = await client.chat.completions
      .create({ model: 'tiny', messages: chat('restart', 'mk-restart-1'), max_tokens: 1 })
      .withResponse();
    expect(await recordOf(url, first.response.headers.get('x-request-id'))).toMatchObject({ decision: 'cache_hit', worker: a.url });
    await a.restart();
    // Its first batches after the restart are numbered 1, 2, … again: a reset, not duplicates to drop.
    await eventsLive(url, a, 9);
    expect((await state(url)).workers.find((x) => x.url === a.url)!.kv_events!.resets_total).toBe(1);
    // The restarted engine holds nothing of the old prefix, and the router no longer says it does.
    const { data, response } = await client.chat.completions
      .create({ model: 'tiny', messages: chat('restart', 'mk-restart-2'), max_tokens: 1 })
      .withResponse();
    expect(await recordOf(url, response.headers.get('x-request-id'))).toMatchObject({ decision: 'cache_miss', matched_blocks: 0 });
    expect(data.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
  }, 60_000);

  it('the gate acts on their real queue: the owner, queued at the limit, is turned away and the request is booked cache_worker_queued', async () => {
    // One request runs at a time, 100 ms a token: a held request keeps an engine busy for seconds.
    const { url, client } = await fleet({ maxNumSeqs: 1, interTokenLatencyMs: 100 }, ['--worker-queue-limit', '2']);
    const [a] = sims;
    const before = await eventsOf(url, a!);
    await direct(a!, chat('gate', 'mk-gate-warm'));
    await eventsApplied(url, a!, before);
    // Unqueued, the owner gets its prefix back: the diversion below is the gate's doing.
    const first = await client.chat.completions
      .create({ model: 'tiny', messages: chat('gate', 'mk-gate-0'), max_tokens: 1 })
      .withResponse();
    expect((await recordOf(url, first.response.headers.get('x-request-id'))).decision).toBe('cache_hit');
    expect(a!.received('mk-gate-0')).toBe(1);

    // Hold A: one running, two waiting in its own queue, sent to it directly.
    const held = [0, 1, 2].map((i) => direct(a!, chat(`hold${i}`, `mk-hold-${i}`), 60).catch(() => undefined));
    await eventually(
      async () => {
        const w = (await state(url)).workers.find((x) => x.url === a!.url)!;
        return w.waiting !== null && w.waiting >= 2;
      },
      10_000,
      20,
    );
    const { data, response } = await client.chat.completions
      .create({ model: 'tiny', messages: chat('gate', 'mk-gate-1'), max_tokens: 1 })
      .withResponse();
    expect(data.choices.length).toBe(1);
    const rec = await recordOf(url, response.headers.get('x-request-id'));
    expect(rec.decision).toBe('cache_worker_queued');
    expect(rec.worker).not.toBe(a!.url);
    expect(rec.best_worker).toBe(a!.url);
    expect(rec.candidates.find((c) => c.worker === a!.url)).toMatchObject({ gate: 'gated' });
    // The engines agree: A never saw it, one of the others did.
    expect(a!.received('mk-gate-1')).toBe(0);
    expect(sims[1]!.received('mk-gate-1') + sims[2]!.received('mk-gate-1')).toBe(1);
    const explain = await runCli(['explain', '--url', url, '--request', rec.request_id]);
    expect(explain.code, explain.stderr).toBe(0);
    expect(explain.stdout).toContain('cache_worker_queued');
    await Promise.all(held);
  }, 90_000);

  it('a full waiting queue answers 429: the router retries on another engine before the first byte, and answers 503 when every queue is full', async () => {
    const { url, client } = await fleet({ maxNumSeqs: 1, maxWaitingQueueLength: 1, interTokenLatencyMs: 100 });
    const [a, b, c] = sims as [LlmdSim, LlmdSim, LlmdSim];
    const before = await eventsOf(url, a);
    await direct(a, chat('full', 'mk-full-warm'));
    await eventsApplied(url, a, before);
    // Fill A: one running, one waiting; a third is refused by A itself.
    const holdA = [0, 1].map((i) => direct(a, chat(`fa${i}`, `mk-fa-${i}`), 40).catch(() => undefined));
    await eventually(async () => ((await state(url)).workers.find((x) => x.url === a.url)!.waiting ?? 0) >= 1, 10_000, 20);
    const refused = await direct(a, chat('probe', 'mk-refused'), 1).then(
      () => 200,
      (err: { status?: number }) => err.status,
    );
    expect(refused).toBe(429);

    // A owns the prefix (no gate here), answers 429, and the retry lands elsewhere.
    const { data, response } = await client.chat.completions
      .create({ model: 'tiny', messages: chat('full', 'mk-full-1'), max_tokens: 1 })
      .withResponse();
    expect(data.choices.length).toBe(1);
    const rec = await recordOf(url, response.headers.get('x-request-id'));
    expect(rec.worker).toBe(a.url);
    expect(rec.retried_to).not.toBeNull();
    expect(rec.retried_to).not.toBe(a.url);
    expect(a.received('mk-full-1')).toBe(1);
    expect(b.received('mk-full-1') + c.received('mk-full-1')).toBe(1);

    // Every queue full: the client gets the router's 503 envelope, promptly.
    const holdBC = [b, c].flatMap((s) => [0, 1].map((i) => direct(s, chat(`f${s.url}${i}`, `mk-fbc-${i}`), 40).catch(() => undefined)));
    await eventually(async () => (await state(url)).workers.every((w) => (w.waiting ?? 0) >= 1), 10_000, 20);
    const t0 = Date.now();
    const res = await rawRequest(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: chat('full', 'mk-full-2'), max_tokens: 1 }),
    });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(res.status).toBe(503);
    expect(res.headers['x-router-error-code']).toBe('upstream_overloaded');
    expect(res.headers['x-router-upstream-status']).toBe('429');
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'upstream_overloaded' } });
    expect(sims.reduce((n, s) => n + s.received('mk-full-2'), 0)).toBe(2);
    await Promise.all([...holdA, ...holdBC]);
  }, 90_000);

  it('top --url and top --engines read them; doctor and explain work on the decisions', async () => {
    const { url, client } = await fleet({});
    for (let i = 0; i < 6; i++)
      await client.chat.completions.create({ model: 'tiny', messages: chat(`top${i % 2}`, `mk-top-${i}`), max_tokens: 2 });
    const viaRouter = await runCli(['top', '--url', url, '--once', '--json']);
    expect(viaRouter.code, viaRouter.stderr).toBe(0);
    const doc = JSON.parse(viaRouter.stdout) as { workers: Array<{ url: string; waiting: number | null }> };
    expect(doc.workers.map((w) => w.url).sort()).toEqual(sims.map((s) => s.url).sort());
    for (const w of doc.workers) expect(w.waiting).toBe(0);
    const table = await runCli(['top', '--url', url, '--once']);
    expect(table.code, table.stderr).toBe(0);
    for (const s of sims) expect(table.stdout).toContain(new URL(s.url).host);

    const bare = await runCli(['top', '--engines', ...sims.map((s) => s.url), '--once', '--json']);
    expect(bare.code, bare.stderr).toBe(0);
    const engines = JSON.parse(bare.stdout) as { workers: Array<{ url: string; waiting: number | null; running: number | null }> };
    expect(engines.workers.map((w) => w.url).sort()).toEqual(sims.map((s) => s.url).sort());
    for (const w of engines.workers) expect(w).toMatchObject({ waiting: 0, running: 0 });

    const doctor = await runCli(['doctor', '--url', url, '--json']);
    expect(doctor.code, doctor.stderr).toBe(0);
    const breakdown = JSON.parse(doctor.stdout) as { requests: number; promptTokens: number; reportedCached: number };
    expect(breakdown.requests).toBe(6);
    // Later requests of each prefix found it cached on its engine: the engines' own counts.
    expect(breakdown.reportedCached).toBeGreaterThan(0);
    const story = await runCli(['explain', '--url', url, '--once', '--json']);
    expect(story.code, story.stderr).toBe(0);
    expect(story.stdout.trim().split('\n')).toHaveLength(6);
  }, 60_000);
});
