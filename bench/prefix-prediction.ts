/**
 * How well the router's prefix index predicts what an engine then reuses: for every
 * request, the tokens the index says the serving worker holds, against the
 * `cached_tokens` the engine reports for it. Once with the index built from requests
 * (`--prefix-source requests`), once from the engines' KV events (`events`), each on a
 * fresh simulated fleet replaying the same seeded hot-prefix conversations.
 *
 *   npm run bench:prediction -- [--requests 600] [--workers 4] [--kv-blocks 4096] [--concurrency 1] [--flavor sglang|vllm]
 *
 * `--flavor vllm` runs simulated vLLM engines, whose hashes no router can compute:
 * their endpoints are given as --kv-events entries and their blocks keyed by the
 * tokens the events carry.
 *
 * The prediction is taken the way the router takes it at selection, just before the
 * request is sent, from the router's own index: under `events` the engine's block
 * keys of the rendered, tokenized prompt; under `requests` the text key, turned into
 * tokens as the policy does (input tokens × matched blocks / query blocks). Both are
 * capped as the engine caps reuse (it always computes the prompt's last token). Nothing
 * waits for events to settle between requests: a stale index shows as a miss.
 */
import { defaultConfig } from '../src/config/index.js';
import { chatBlockHashes, renderChat, tokenize } from '../src/prefix/index.js';
import type { ChatMessage } from '../src/prefix/index.js';
import { engineBlockKeys, Router, silentLogger } from '../src/router/index.js';
import { startSimFleet } from '../src/sim/index.js';
import { Workload } from '../src/workload/index.js';

const argv = process.argv.slice(2);
const arg = (name: string, dflt: number): number => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const REQUESTS = arg('requests', 600);
const WORKERS = arg('workers', 4);
const KV_BLOCKS = arg('kv-blocks', 4096);
const CONCURRENCY = arg('concurrency', 1);
const FLAVOR = argv.includes('--flavor') ? (argv[argv.indexOf('--flavor') + 1] as 'sglang' | 'vllm') : 'sglang';
const VLLM = FLAVOR === 'vllm';
const BS = 16;

interface Tally {
  requests: number;
  exact: number;
  withinBlock: number;
  within10: number;
  engineCached: number;
  predicted: number;
  errors: number;
}

async function run(source: 'requests' | 'events'): Promise<{ tally: Tally; lost: number; evictions: number }> {
  const fleet = await startSimFleet({ workers: WORKERS, speedup: 20, kvBlocks: KV_BLOCKS, seed: 11, flavor: FLAVOR, push: { kvEvents: true, kvFormat: VLLM ? 'map' : 'array', loadPublish: !VLLM, topic: '' } });
  const kvEvents = VLLM
    ? fleet.servers.map((s) => {
        const e = s.engine.push!.kvEventsEntry()!;
        return { workers: s.url, endpoint: e.endpoint, replayEndpoint: e['replay-endpoint'], topic: e.topic, dpSize: e['dp-size'] };
      })
    : [];
  const router = new Router({ config: { ...defaultConfig(), workerUrls: fleet.urls, port: 0, policy: 'cache_aware', workerQueueLimit: 6, prefixSource: source, kvEvents, tui: false }, log: silentLogger, version: 'bench' });
  await router.start();
  if (router.prefixSource !== source) throw new Error(`the router built its index from ${router.prefixSource}, not ${source}`);
  const workload = new Workload({ seed: 7, families: 16, zipfS: 1.1, systemTokensMin: 500, systemTokensMax: 2000, maxTurns: 4, sessions: 32, outputMedianTokens: 24, outputMaxTokens: 48 });
  const histories = new Map<number, ChatMessage[]>();
  const tally: Tally = { requests: 0, exact: 0, withinBlock: 0, within10: 0, engineCached: 0, predicted: 0, errors: 0 };
  const urls = router.state().workers.map((w) => w.url);

  const one = async (): Promise<void> => {
    const a = workload.next();
    const history = histories.get(a.session) ?? [];
    const messages: ChatMessage[] = [{ role: 'system', content: workload.systemPrompts[a.family]! }, ...history, { role: 'user', content: a.userMessage }];
    const predictedBy = predict(router, source, messages);
    const before = router.state().workers.map((w) => w.requests_total);
    const res = await fetch(`${router.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages, max_tokens: a.maxTokens }) });
    const body = (await res.json()) as { usage?: { prompt_tokens_details?: { cached_tokens?: number } }; choices?: Array<{ message?: { content?: string } }> };
    const after = router.state().workers.map((w) => w.requests_total);
    const served = urls.find((_, i) => after[i]! > before[i]!);
    const cached = body.usage?.prompt_tokens_details?.cached_tokens;
    if (res.status !== 200 || served === undefined || cached === undefined) {
      tally.errors++;
      return;
    }
    const guess = predictedBy.get(served) ?? 0;
    tally.requests++;
    tally.engineCached += cached;
    tally.predicted += guess;
    if (guess === cached) tally.exact++;
    if (Math.abs(guess - cached) <= BS) tally.withinBlock++;
    if (Math.abs(guess - cached) <= 0.1 * Math.max(guess, cached)) tally.within10++;
    if (a.last) histories.delete(a.session);
    else histories.set(a.session, [...history, { role: 'user', content: a.userMessage }, { role: 'assistant', content: body.choices?.[0]?.message?.content ?? '' }]);
  };
  for (let sent = 0; sent < REQUESTS; sent += CONCURRENCY) await Promise.all(Array.from({ length: Math.min(CONCURRENCY, REQUESTS - sent) }, one));
  const lost = router.state().workers.reduce((x, w) => x + (w.kv_events?.lost_total ?? 0) + (w.kv_events?.unplaced_blocks_total ?? 0), 0);
  const evictions = fleet.servers.reduce((x, srv) => x + srv.engine.ranks.reduce((y, r) => y + r.cache.evictions, 0), 0);
  await router.close();
  await fleet.close();
  return { tally, lost, evictions };
}

/** Tokens of the prompt each worker holds, as the router's index says at this instant. */
function predict(router: Router, source: 'requests' | 'events', messages: ChatMessage[]): Map<string, number> {
  const tokens = tokenize(renderChat(messages));
  const cap = Math.floor((tokens.length - 1) / BS);
  const out = router.index.newMatchBuffer();
  const byUrl = new Map<string, number>();
  if (source === 'events') {
    const n = router.index.match(engineBlockKeys(tokens, BS, VLLM ? 'tokens' : 'sim'), out);
    for (let i = 0; i < n; i++) {
      const url = router.kvIndex.workerAt(out.slots[i]!)!.url;
      byUrl.set(url, Math.max(byUrl.get(url) ?? 0, Math.min(out.depths[i]!, cap) * BS));
    }
  } else {
    const { hashes, chars } = chatBlockHashes(messages, BS * 4);
    const inputTokens = Math.max(1, Math.ceil(chars / 4));
    const n = router.index.match(hashes, out);
    for (let i = 0; i < n; i++) {
      const url = router.registry.bySlotIndex(out.slots[i]!)!.url;
      const estimate = Math.floor((inputTokens * out.depths[i]!) / Math.max(1, hashes.length));
      byUrl.set(url, Math.min(Math.floor(estimate / BS), cap) * BS);
    }
  }
  return byUrl;
}

const pct = (x: number, n: number): string => `${((100 * x) / Math.max(1, n)).toFixed(1)} %`;
console.log(`node ${process.version}; ${REQUESTS} requests, ${CONCURRENCY} in flight; ${WORKERS} simulated ${VLLM ? 'vLLM engines (blocks keyed by their tokens)' : 'SGLang engines'}, ${KV_BLOCKS} KV blocks of ${BS} tokens each; hot-prefix conversations (16 system prompts, Zipf 1.1, up to 4 turns)`);
console.log('');
console.log(`| index built from | requests | predicted = engine cached | within one block | within 10 % | engine cached tokens | predicted tokens | KV events lost${VLLM ? ' (+ unplaced blocks)' : ''} | blocks the engines evicted |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const source of ['requests', 'events'] as const) {
  const { tally: t, lost, evictions } = await run(source);
  console.log(
    `| ${source} | ${t.requests}${t.errors > 0 ? ` (${t.errors} errors)` : ''} | ${pct(t.exact, t.requests)} | ${pct(t.withinBlock, t.requests)} | ${pct(t.within10, t.requests)} | ${t.engineCached.toLocaleString('en')} | ${t.predicted.toLocaleString('en')} | ${source === 'events' ? lost : '–'} | ${evictions.toLocaleString('en')} |`,
  );
}
