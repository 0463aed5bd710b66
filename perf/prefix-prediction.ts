/**
 * Does the router send a request to the engine that holds its longest prefix? For
 * every routed request the bench reads, just before sending it, what each simulated
 * engine's own block cache holds of the prompt (SimEngine.heldPrefixBlocks: not the
 * router's index), then reads where the router sent it from the router's decision
 * record (by the request's x-request-id). Once with the index built from requests
 * (`--prefix-source requests`), once from the engines' KV events (`events`), each on
 * a fresh fleet replaying the same seeded hot-prefix conversations, one request in
 * flight.
 *
 *   npm run perf -- prediction [--requests 600] [--workers 4] [--kv-blocks 4096] [--flavor sglang|vllm]
 *                                [--direct-share 0.25] [--pin-every 30] [--min-matched-tokens 1024] [--misses 0]
 *
 * Two things keep idle engines' ties from faking the figure:
 * - a seeded share of the conversation turns (`--direct-share`) goes straight to a
 *   random engine, bypassing the router: those prefixes are held by engines the router
 *   never sent them to, which a requests index cannot know and an events index can;
 * - every `--pin-every` routed requests each engine's reported waiting count is pinned
 *   anew (PUT /sim/load): the real count (4 in 7), 3 (2 in 7) or 6 (1 in 7: at the
 *   limit, the gate turns it away), never all four at the limit. The bench waits until
 *   the router's load table shows the pins. Gate diversions go elsewhere on purpose and
 *   are counted apart: `cache_worker_queued`, and partial ones (a `cache_hit` on a
 *   shallower owner because the gate turned the deepest away).
 *
 * A request whose longest held prefix is credited below `--cache-affinity-min-matched-tokens`
 * (the router's default, 1,024) is routed by load on purpose too (docs/routing.md,
 * "1. Candidates") and counted apart; so is a request no engine holds a block of (any
 * destination is right).
 *
 * `--flavor vllm` runs simulated vLLM engines, whose hashes no router can compute:
 * their endpoints are given as --kv-events entries and their blocks keyed by the
 * tokens the events carry. Their load is polled, not pushed.
 */
import { benchArg } from './support/args.js';
import { atLeast, writeResult } from './support/results.js';
import type { GoalVerdict } from './support/results.js';
import { HOT_PREFIX_CONVERSATIONS } from './support/hot-prefix.js';
import { ChatClient, pinWaiting } from './support/chat-client.js';
import { defaultConfig } from '../src/config/index.js';
import { blockHashes, renderChat, tokenize } from '../src/prefix/index.js';
import type { ChatMessage } from '../src/prefix/index.js';
import { Router, silentLogger } from '../src/router/index.js';
import type { AdminDecision } from '../src/contract/index.js';
import { Rng, startSimFleet } from '../src/sim/index.js';
import { Workload } from '../src/workload/index.js';

const REQUESTS = Number(benchArg('requests', '600'));
const WORKERS = Number(benchArg('workers', '4'));
const KV_BLOCKS = Number(benchArg('kv-blocks', '4096'));
const FLAVOR = benchArg('flavor', 'sglang') as 'sglang' | 'vllm';
const DIRECT_SHARE = Number(benchArg('direct-share', '0.25'));
const PIN_EVERY = Number(benchArg('pin-every', '30'));
const MIN_MATCHED = Number(benchArg('min-matched-tokens', '1024'));
const MISSES = Number(benchArg('misses', '0'));
const LIMIT = 6;
const VLLM = FLAVOR === 'vllm';
const BS = 16;

interface Tally {
  routed: number;
  direct: number;
  errors: number;
  diverted: number;
  /** cache_hit on a shallower owner because the gate turned the deepest one away (docs/routing.md §Partial diversions). */
  partial: number;
  noHolder: number;
  belowThreshold: number;
  /** Requests that count: not diverted, some engine held a block, credited at or above the threshold. */
  held: number;
  toHolder: number;
  outside: number;
  outsideToHolder: number;
  expectedExact: number;
  expectedCounted: number;
  promptTokens: number;
  engineCached: number;
  attainable: number;
  misses: Miss[];
  missReasons: Map<string, number>;
}

interface Miss {
  id: string;
  served: number;
  urls: string[];
  held: number[];
  promptBlocks: number;
  rec: AdminDecision;
}

async function run(source: 'requests' | 'events'): Promise<{ tally: Tally; lost: number; evictions: number }> {
  const fleet = await startSimFleet({
    workers: WORKERS,
    speedup: 20,
    kvBlocks: KV_BLOCKS,
    seed: 11,
    flavor: FLAVOR,
    push: { kvEvents: true, kvFormat: VLLM ? 'map' : 'array', loadPublish: !VLLM, topic: '' },
  });
  const kvEvents = VLLM
    ? fleet.servers.map((s) => {
        const e = s.engine.push!.kvEventsEntry()!;
        return { workers: s.url, endpoint: e.endpoint, replayEndpoint: e['replay-endpoint'], topic: e.topic, dpSize: e['dp-size'] };
      })
    : [];
  const router = new Router({
    config: {
      ...defaultConfig(),
      workerUrls: fleet.urls,
      port: 0,
      policy: 'cache_aware',
      workerQueueLimit: LIMIT,
      cacheAffinityMinMatchedTokens: MIN_MATCHED,
      prefixSource: source,
      kvEvents,
      tui: false,
    },
    log: silentLogger,
    version: 'bench',
  });
  await router.start();
  if (router.prefixSource !== source) throw new Error(`the router built its index from ${router.prefixSource}, not ${source}`);
  const client = new ChatClient(4);
  const workload = new Workload(HOT_PREFIX_CONVERSATIONS);
  // Apart from the workload's draws, so that both arms send the same turns the same way.
  const directRng = new Rng(0xd1ec7);
  const pinRng = new Rng(0x9175);
  const histories = new Map<number, ChatMessage[]>();
  const engines = fleet.servers.map((s) => s.engine);
  // Per engine, the prompt blocks the bench sent it through the router and directly.
  const routedTo = engines.map(() => new Set<number>());
  const directTo = engines.map(() => new Set<number>());
  const t: Tally = {
    routed: 0,
    direct: 0,
    errors: 0,
    diverted: 0,
    partial: 0,
    noHolder: 0,
    belowThreshold: 0,
    held: 0,
    toHolder: 0,
    outside: 0,
    outsideToHolder: 0,
    expectedExact: 0,
    expectedCounted: 0,
    promptTokens: 0,
    engineCached: 0,
    attainable: 0,
    misses: [],
    missReasons: new Map(),
  };
  let n = 0;

  const repin = async (): Promise<void> => {
    let pins: Array<number | null>;
    do pins = engines.map(() => [null, null, null, null, 3, 3, LIMIT][pinRng.int(7)]!);
    while (pins.every((p) => p === LIMIT));
    await Promise.all(fleet.urls.map((u, i) => pinWaiting(u, pins[i]!)));
    // The gate reads the router's load table: wait until it shows the pins (push: ~50 ms; vLLM's poll: 250 ms).
    const until = performance.now() + 5000;
    for (;;) {
      const seen = router.state().workers;
      if (pins.every((p, i) => seen.find((w) => w.url === fleet.urls[i])?.waiting === (p ?? 0))) break;
      if (performance.now() > until) throw new Error('the router did not see the pinned waiting counts within 5 s');
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  while (t.routed + t.errors < REQUESTS) {
    const a = workload.next();
    const history = histories.get(a.session) ?? [];
    const messages: ChatMessage[] = [
      { role: 'system', content: workload.systemPrompts[a.family]! },
      ...history,
      { role: 'user', content: a.userMessage },
    ];
    const tokens = tokenize(renderChat(messages));
    const hashes = blockHashes(tokens, BS);
    const direct = directRng.next() < DIRECT_SHARE;
    const directEngine = directRng.int(engines.length);
    let reply: string;
    if (direct) {
      const out = await client.chat(fleet.urls[directEngine]!, messages, a.maxTokens);
      if (out.status !== 200) throw new Error(`a direct request to an engine answered ${out.status}`);
      for (const h of hashes) directTo[directEngine]!.add(h);
      t.direct++;
      reply = out.reply;
    } else {
      if (PIN_EVERY > 0 && (t.routed + t.errors) % PIN_EVERY === 0) await repin();
      // What each engine's own cache holds of the prompt as the request leaves the client.
      const held = engines.map((e) => e.heldPrefixBlocks(tokens));
      const deepest = Math.max(...held);
      const credit = hashes.length === 0 ? 0 : Math.floor((tokens.length * deepest) / hashes.length);
      const id = `pred-${source}-${n++}`;
      const out = await client.chat(router.url, messages, a.maxTokens, { requestId: id });
      const rec = router.decisionsDoc({ requestId: id }).decisions[0];
      if (out.status !== 200 || rec === undefined || out.cachedTokens === undefined) {
        t.errors++;
        continue;
      }
      const served = fleet.urls.indexOf(rec.worker);
      t.routed++;
      t.promptTokens += out.promptTokens ?? tokens.length;
      t.engineCached += out.cachedTokens;
      t.attainable += Math.min(deepest, Math.floor((tokens.length - 1) / BS)) * BS;
      // The router's own expectation for the worker it chose, as its prediction-error metric takes it.
      const expected =
        rec.query_blocks === 0
          ? 0
          : source === 'events'
            ? Math.min(rec.matched_blocks, Math.floor((rec.input_tokens - 1) / BS)) * BS
            : Math.round((rec.input_tokens * rec.matched_blocks) / rec.query_blocks);
      t.expectedCounted++;
      if (expected === out.cachedTokens) t.expectedExact++;
      if (rec.decision === 'cache_worker_queued') t.diverted++;
      else if (rec.partial_diversion) t.partial++;
      else if (deepest === 0) t.noHolder++;
      else if (credit < MIN_MATCHED) t.belowThreshold++;
      else {
        t.held++;
        const hit = held[served] === deepest;
        if (hit) t.toHolder++;
        // Warmed outside the router: every longest holder got its deepest blocks from a direct request.
        const holders = held.flatMap((h, i) => (h === deepest ? [i] : []));
        const outside = holders.every((i) => depthIn(directTo[i]!, hashes) > depthIn(routedTo[i]!, hashes));
        if (outside) {
          t.outside++;
          if (hit) t.outsideToHolder++;
        }
        if (!hit) {
          const reason = missReason(rec, held, deepest, fleet.urls);
          t.missReasons.set(reason, (t.missReasons.get(reason) ?? 0) + 1);
          if (t.misses.length < MISSES) t.misses.push({ id, served, urls: fleet.urls, held, promptBlocks: hashes.length, rec });
        }
      }
      if (served >= 0) for (const h of hashes) routedTo[served]!.add(h);
      reply = out.reply;
    }
    if (a.last) histories.delete(a.session);
    else histories.set(a.session, [...history, { role: 'user', content: a.userMessage }, { role: 'assistant', content: reply }]);
  }
  const lost = router.state().workers.reduce((x, w) => x + (w.kv_events?.lost_total ?? 0) + (w.kv_events?.unplaced_blocks_total ?? 0), 0);
  const evictions = fleet.servers.reduce((x, srv) => x + srv.engine.ranks.reduce((y, r) => y + r.cache.evictions, 0), 0);
  await client.close();
  await router.close();
  await fleet.close();
  return { tally: t, lost, evictions };
}

/** Leading blocks of `hashes` in `set` (the chain makes block i's hash name blocks 0..i). */
function depthIn(set: Set<number>, hashes: readonly number[]): number {
  let d = 0;
  while (d < hashes.length && set.has(hashes[d]!)) d++;
  return d;
}

/** Why a request that counts did not reach a longest holder, from what the router saw (its record's owners; blocks in the index's own units). */
function missReason(rec: AdminDecision, held: number[], deepest: number, urls: string[]): string {
  const seen = (i: number): number => rec.candidates.find((c) => c.worker === urls[i])?.matched_blocks ?? 0;
  const holders = held.flatMap((h, i) => (h === deepest ? [i] : []));
  if (holders.every((i) => seen(i) === 0)) return 'the index credited no longest holder with any block';
  if (!holders.some((i) => urls[i] === rec.best_worker))
    return 'the index ranked a worker holding less at least as deep as the longest holder';
  return `the index saw a longest holder as deepest; the policy chose otherwise (${rec.decision}, ${rec.reason})`;
}

const pct = (x: number, n: number): string => (n === 0 ? '–' : `${((100 * x) / n).toFixed(1)} %`);
console.log(
  `node ${process.version}; ${REQUESTS} routed requests, 1 in flight, sent by the bench's undici client in the same process as the router and the engines; ` +
    `${WORKERS} simulated ${VLLM ? 'vLLM engines (blocks keyed by their tokens, load polled)' : 'SGLang engines (load pushed)'}, ${KV_BLOCKS} KV blocks of ${BS} tokens each; ` +
    `hot-prefix conversations (16 system prompts of 500–2,000 tokens, Zipf 1.1, up to 4 turns); ${Math.round(DIRECT_SHARE * 100)} % of turns sent straight to a random engine; ` +
    `waiting counts re-pinned every ${PIN_EVERY} routed requests; --worker-queue-limit ${LIMIT}, --cache-affinity-min-matched-tokens ${MIN_MATCHED}`,
);
console.log('');
console.log(
  `| index built from | routed (+ direct) | **went to the longest holder** | of those some engine held ≥ 1 block of | of those warmed outside the router | no holder | below the affinity threshold | gate diversions: whole + partial | router's expectation = engine cached | engine cached / prompt tokens | if each had gone to its longest holder | KV events lost${VLLM ? ' (+ unplaced blocks)' : ''} | blocks evicted |`,
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
const details: string[] = [];
const share = (x: number, n: number): number | null => (n === 0 ? null : Number(((100 * x) / n).toFixed(1)));
const figures: Record<string, number | string | null> = {
  flavor: FLAVOR,
  requests: REQUESTS,
  kv_blocks: KV_BLOCKS,
  min_matched_tokens: MIN_MATCHED,
};
const goals: GoalVerdict[] = [];
for (const source of ['requests', 'events'] as const) {
  const { tally: t, lost, evictions } = await run(source);
  const counted = t.held + t.noHolder;
  const toHolder = share(t.toHolder + t.noHolder, counted);
  Object.assign(figures, {
    [`${source}_to_longest_holder_pct`]: toHolder,
    [`${source}_warmed_outside_to_holder_pct`]: share(t.outsideToHolder, t.outside),
    [`${source}_expectation_exact_pct`]: share(t.expectedExact, t.expectedCounted),
    [`${source}_engine_cached_pct`]: share(t.engineCached, t.promptTokens),
    [`${source}_attainable_cached_pct`]: share(t.attainable, t.promptTokens),
    [`${source}_evicted_blocks`]: evictions,
  });
  if (source === 'events' && toHolder !== null) {
    goals.push(atLeast('an events index sends requests to the engine holding their longest prefix', toHolder, 99, ' %'));
    figures.events_lost = lost;
  }
  console.log(
    `| ${source} | ${t.routed} (+ ${t.direct})${t.errors > 0 ? `, ${t.errors} errors` : ''} | **${pct(t.toHolder + t.noHolder, counted)}** | ${pct(t.toHolder, t.held)} (${t.toHolder} / ${t.held}) | ${pct(t.outsideToHolder, t.outside)} (${t.outsideToHolder} / ${t.outside}) | ${t.noHolder} | ${t.belowThreshold} | ${t.diverted} + ${t.partial} | ${pct(t.expectedExact, t.expectedCounted)} | ${pct(t.engineCached, t.promptTokens)} | ${pct(t.attainable, t.promptTokens)} | ${source === 'events' ? lost : '–'} | ${evictions.toLocaleString('en')} |`,
  );
  if (t.missReasons.size > 0)
    details.push(`${source}: misses among the requests that count: ${[...t.missReasons].map(([r, k]) => `${k} × ${r}`).join('; ')}`);
  for (const m of t.misses) {
    const r = m.rec;
    details.push(
      `  ${m.id}: engines held [${m.held.join(', ')}] of ${m.promptBlocks} blocks; router: ${r.decision} (${r.reason}) → engine ${m.served} (${r.worker}), credited ${r.matched_blocks} of ${r.query_blocks} index blocks; ` +
        `owners seen: ${r.candidates.map((c) => `engine ${m.urls.indexOf(c.worker)} ${c.matched_blocks} (waiting ${c.waiting}, ${c.gate})`).join(', ') || 'none'}`,
    );
  }
}
if (details.length > 0) console.log(`\n${details.join('\n')}`);
writeResult('prediction', { figures, goals, bottleneck: 'none: one request in flight; an accuracy figure, not a rate' });
