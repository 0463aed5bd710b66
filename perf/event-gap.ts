/**
 * The event gap: an engine announces a prefix's blocks (BlockStored) only when the
 * prefill that computes them completes, so a request for that prefix that arrives
 * while the first one is still being prefilled finds nothing in an index built from
 * KV events and is routed as a miss. How often that happens, and what it costs in
 * cached tokens, on in-process simulated SGLang engines at the modelled H100 speed
 * (`--speedup 1`: a cold 2,000-token prefill takes about 40 ms).
 *
 *   npm run perf -- event-gap [--part ab] [--workers 4] [--speedup 1] [--kv-blocks 4096]
 *                              [--siblings 8] [--staggers 0,5,20,50] [--trials 12] [--system-tokens 2000]
 *                              [--rates 40,160] [--families 16] [--requests 2000]
 *                              [--predicted-prefix-ttl-ms 0,2000]
 *
 * The events arms run once per `--predicted-prefix-ttl-ms` value (the router option:
 * under an events index each request sent to a worker is remembered that long, and a
 * lookup credits the worker with the prefix two requests share until the engine's
 * events confirm it; 0 turns it off; docs/routing.md §The event gap). The requests
 * index (which never predicts) and the oracles run once.
 *
 * (a) Sibling bursts: `--siblings` requests sharing a new `--system-tokens` system
 *     prompt, each with its own question, sent through the router all at once or one
 *     every `stagger` ms, `--trials` times per stagger with a new prompt each time.
 *     Per sibling (every request but the first routed): did it go to the first's
 *     engine, what did the engine report reusing, was it routed before the router's
 *     index held any block of the prefix (its decision record's time against the
 *     moment the bench saw the index hold it: the index is polled every millisecond
 *     from the first send to time the gap), and was it routed blind (its decision
 *     record names no owner: neither the index nor a prediction credited anyone).
 * (b) The hot-prefix conversations of `npm run perf -- prediction`, Poisson arrivals at each of
 *     `--rates` (per second; about 8 and 32 requests in flight on this fleet), each
 *     turn sent after the previous reply, every request streamed: the cached-token share the engines
 *     report, against the requests index and against an oracle (the bench itself
 *     routes, straight to the engines, knowing every engine's cache and every prompt
 *     inside every engine: what a perfect predicted entry would know), and against
 *     the same oracle knowing the caches only (an events index with no lag and no
 *     predicted entry): the difference of the two is what closing the gap is worth
 *     under one policy. Before each
 *     request the bench reads what each engine holds (SimEngine.heldPrefixBlocks) and
 *     has inside it not yet stored (perf/support/engine-watch.ts).
 *
 * `--prefix-source requests` records a worker as owner when it answers with a 2xx
 * status (docs/routing.md §Recording): a streamed response's status comes when the
 * engine accepts the request, a whole response's when it is done. (a) runs the
 * requests index both ways.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { HOT_PREFIX_CONVERSATIONS } from './support/hot-prefix.js';
import { benchArg } from './support/args.js';
import { ChatClient } from './support/chat-client.js';
import { EngineWatch } from './support/engine-watch.js';
import { atMost, writeResult } from './support/results.js';
import type { GoalVerdict } from './support/results.js';
import { defaultConfig } from '../src/config/index.js';
import { blockHashes, chatBlockHashes, renderChat, tokenize } from '../src/prefix/index.js';
import type { ChatMessage } from '../src/prefix/index.js';
import { engineBlockKeys, Router, silentLogger } from '../src/router/index.js';
import type { AdminDecision } from '../src/contract/index.js';
import { Rng, startSimFleet } from '../src/sim/index.js';
import type { SimFleet } from '../src/sim/index.js';
import { systemPrompt, Workload } from '../src/workload/index.js';

const PART = benchArg('part', 'ab');
const WORKERS = Number(benchArg('workers', '4'));
const SPEEDUP = Number(benchArg('speedup', '1'));
const KV_BLOCKS = Number(benchArg('kv-blocks', '4096'));
const SIBLINGS = Number(benchArg('siblings', '8'));
const STAGGERS = benchArg('staggers', '0,5,20,50').split(',').map(Number);
const TRIALS = Number(benchArg('trials', '12'));
const SYSTEM_TOKENS = Number(benchArg('system-tokens', '2000'));
const RATES = benchArg('rates', '40,160').split(',').map(Number);
const FAMILIES = Number(benchArg('families', '16'));
const REQUESTS = Number(benchArg('requests', '2000'));
const TTLS = benchArg('predicted-prefix-ttl-ms', `0,${defaultConfig().predictedPrefixTtlMs}`).split(',').map(Number);
const LIMIT = 6;
const MIN_MATCHED = 1024;
const BS = 16;

type Source = 'requests' | 'events';
/** The bench routes, knowing the engines' caches and the prompts inside them (`oracle`), or their caches only (`oracle-caches`). */
type Oracle = 'oracle' | 'oracle-caches';
/** What routes a run: the router with its index from events or requests (and, under events, --predicted-prefix-ttl-ms), or an oracle. */
interface Arm {
  kind: Source | Oracle;
  /** --predicted-prefix-ttl-ms; only read under events. */
  ttlMs: number;
}

const armLabel = (a: Arm): string =>
  a.kind === 'events'
    ? `events (predictions ${a.ttlMs > 0 ? `${a.ttlMs} ms` : 'off'})`
    : a.kind === 'requests'
      ? 'requests'
      : a.kind === 'oracle'
        ? 'oracle: caches and prompts inside engines'
        : 'oracle: caches only';
const armId = (a: Arm): string => (a.kind === 'events' ? `events${a.ttlMs}` : a.kind);

interface Routed {
  fleet: SimFleet;
  router: Router | undefined;
  watch: EngineWatch;
  close(): Promise<void>;
}

async function startFleet(arm: Arm): Promise<Routed> {
  const source = arm.kind;
  const fleet = await startSimFleet({
    workers: WORKERS,
    speedup: SPEEDUP,
    kvBlocks: KV_BLOCKS,
    seed: 11,
    push: { kvEvents: true, kvFormat: 'array', loadPublish: true, topic: '' },
  });
  const watch = new EngineWatch(
    fleet.servers.map((s) => s.engine),
    BS,
  );
  let router: Router | undefined;
  if (source === 'requests' || source === 'events') {
    router = new Router({
      config: {
        ...defaultConfig(),
        workerUrls: fleet.urls,
        port: 0,
        policy: 'cache_aware',
        workerQueueLimit: LIMIT,
        prefixSource: source,
        predictedPrefixTtlMs: arm.ttlMs,
        tui: false,
      },
      log: silentLogger,
      version: 'bench',
    });
    await router.start();
    if (router.prefixSource !== source) throw new Error(`the router built its index from ${router.prefixSource}, not ${source}`);
  }
  return {
    fleet,
    router,
    watch,
    close: async () => {
      await router?.close();
      await fleet.close();
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const pct = (x: number, n: number): string => (n === 0 ? '–' : `${((100 * x) / n).toFixed(1)} %`);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};

async function idle(watch: EngineWatch): Promise<void> {
  while (watch.busy) await sleep(5);
  // Long enough for each engine's LoadStat (sent on change, looked at every 50 ms) to show it idle.
  await sleep(150);
}

/** A question of its own for sibling `i` of trial `k`. */
function question(rng: Rng, k: number, i: number): string {
  const words = 'why does the queue grow when the cache is cold and which worker holds the prefix of this runbook step'.split(' ');
  let q = `Trial ${k}, question ${i}:`;
  for (let w = 0, n = 8 + rng.int(16); w < n; w++) q += ` ${words[rng.int(words.length)]}`;
  return `${q}?`;
}

// ------------------------------------------------------------------ (a) sibling bursts

interface BurstRow {
  siblings: number;
  same: number;
  /** Routed before the bench saw the index hold any block of the prefix. */
  early: number;
  blind: number;
  blindThenHeld: number;
  diverted: number;
  cached: number;
  prompt: number;
  reusable: number;
  gapMs: number[];
  gapUnseen: number;
}

async function bursts(arm: Arm, stream: boolean): Promise<Map<number, BurstRow>> {
  const source = arm.kind as Source;
  const f = await startFleet(arm);
  const router = f.router!;
  const client = new ChatClient(SIBLINGS + 4);
  const rows = new Map<number, BurstRow>();
  const buf = router.index.newMatchBuffer();
  let n = 0;
  for (const [si, stagger] of STAGGERS.entries()) {
    const row: BurstRow = {
      siblings: 0,
      same: 0,
      early: 0,
      blind: 0,
      blindThenHeld: 0,
      diverted: 0,
      cached: 0,
      prompt: 0,
      reusable: 0,
      gapMs: [],
      gapUnseen: 0,
    };
    rows.set(stagger, row);
    for (let k = 0; k < TRIALS; k++) {
      const trial = si * 1000 + k;
      const rng = new Rng(0x51b + trial);
      const system = systemPrompt(31, 10_000 + trial, SYSTEM_TOKENS);
      const chats: ChatMessage[][] = Array.from({ length: SIBLINGS }, (_, i) => [
        { role: 'system', content: system },
        { role: 'user', content: question(rng, trial, i) },
      ]);
      const tokens = chats.map((m) => tokenize(renderChat(m)));
      // The index's key for the prompt's first block, the same for every sibling.
      const firstKey = source === 'events' ? engineBlockKeys(tokens[0]!, BS, 'sim') : chatBlockHashes(chats[0]!, BS * 4).hashes;
      const ids = chats.map(() => `gap-${armId(arm)}-${stream ? 's' : 'w'}-${n++}`);
      const t0 = performance.now();
      let gap: number | undefined;
      // Wall-clock time, as decision records carry it (at_ms).
      let heldAt = Infinity;
      const poll = setInterval(() => {
        if (gap === undefined && router.index.match(firstKey, buf, 1) > 0) {
          gap = performance.now() - t0;
          heldAt = Date.now();
        }
      }, 1);
      const outs = await Promise.all(
        chats.map((m, i) => sleep(i * stagger).then(() => client.chat(router.url, m, 16, { requestId: ids[i]!, stream }))),
      );
      clearInterval(poll);
      await idle(f.watch);
      if (gap === undefined && router.index.match(firstKey, buf, 1) > 0) gap = performance.now() - t0;
      if (gap === undefined) row.gapUnseen++;
      else row.gapMs.push(gap);
      const recs = ids.map((id) => router.decisionsDoc({ requestId: id }).decisions[0]);
      if (recs.some((r) => r === undefined) || outs.some((o) => o.status !== 200))
        throw new Error(`a sibling failed: ${outs.map((o) => o.status).join(',')}`);
      const order = recs.map((r, i) => ({ r: r!, i })).sort((a, b) => a.r.seq - b.r.seq);
      const first = order[0]!;
      const firstEngine = f.fleet.servers[f.fleet.urls.indexOf(first.r.worker)]!.engine;
      for (const { r, i } of order.slice(1)) {
        row.siblings++;
        if (r.worker === first.r.worker) row.same++;
        if (r.decision === 'cache_worker_queued') row.diverted++;
        if (r.at_ms < heldAt) row.early++;
        const blind = r.best_matched_blocks === 0;
        if (blind) row.blind++;
        if (blind && r.decision === 'cache_miss' && firstEngine.heldPrefixBlocks(tokens[i]!) > 0) row.blindThenHeld++;
        row.cached += outs[i]!.cachedTokens ?? 0;
        row.prompt += outs[i]!.promptTokens ?? tokens[i]!.length;
        let common = 0;
        while (common < tokens[i]!.length && tokens[i]![common] === tokens[first.i]![common]) common++;
        row.reusable += Math.min(Math.floor(common / BS), Math.floor((tokens[i]!.length - 1) / BS)) * BS;
      }
    }
  }
  await client.close();
  await f.close();
  return rows;
}

// ------------------------------------------------------------------ (b) conversations

interface ConvResult {
  requests: number;
  errors: number;
  diverted: number;
  cached: number;
  prompt: number;
  /** Some engine was computing a deeper prefix of the prompt than any engine held (credited at or above the affinity threshold). */
  gapCases: number;
  gapToComputing: number;
  /** The tokens those sent elsewhere could have reused at the computing engine, minus what they reused. */
  gapLostTokens: number;
  /** Events index: an engine held more blocks of the prompt than the router credited it with. */
  lagCases: number;
  lagMisses: number;
  /** Events index: the router credited an engine with more blocks than it held or had inside it as the request left the client. */
  overCases: number;
  meanInFlight: number;
  cpuPct: number;
  loopP99Ms: number;
  seconds: number;
}

async function conversations(armSpec: Arm, rate: number): Promise<ConvResult> {
  const arm = armSpec.kind;
  const f = await startFleet(armSpec);
  const router = f.router;
  const watch = f.watch;
  const client = new ChatClient(256);
  const workload = new Workload({ ...HOT_PREFIX_CONVERSATIONS, rate, burstFactor: 1, families: FAMILIES, sessions: 64 });
  const oracleRng = new Rng(0x0ac1e);
  const histories = new Map<number, ChatMessage[]>();
  const tails = new Map<number, Promise<void>>();
  const r: ConvResult = {
    requests: 0,
    errors: 0,
    diverted: 0,
    cached: 0,
    prompt: 0,
    gapCases: 0,
    gapToComputing: 0,
    gapLostTokens: 0,
    lagCases: 0,
    lagMisses: 0,
    overCases: 0,
    meanInFlight: 0,
    cpuPct: 0,
    loopP99Ms: 0,
    seconds: 0,
  };
  let n = 0;
  let busyMs = 0;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();

  const one = async (session: number, family: number, userMessage: string, maxTokens: number, last: boolean): Promise<void> => {
    const history = histories.get(session) ?? [];
    const messages: ChatMessage[] = [
      { role: 'system', content: workload.systemPrompts[family]! },
      ...history,
      { role: 'user', content: userMessage },
    ];
    const tokens = tokenize(renderChat(messages));
    const hashes = blockHashes(tokens, BS);
    const held = watch.held(tokens);
    const pending = watch.pending(hashes);
    const known = held.map((h, e) => Math.max(h, pending[e]!));
    const deepestHeld = Math.max(...held);
    const deepestKnown = Math.max(...known);
    const credit = (blocks: number): number => (hashes.length === 0 ? 0 : Math.floor((tokens.length * blocks) / hashes.length));
    const gapCase = deepestKnown > deepestHeld && credit(deepestKnown) >= MIN_MATCHED;
    const id = `conv-${armId(armSpec)}-${n++}`;
    let target: number;
    let url: string;
    if (arm === 'oracle' || arm === 'oracle-caches') {
      target = oracleChoice(arm === 'oracle' ? known : held, watch, credit, oracleRng);
      url = f.fleet.urls[target]!;
    } else {
      target = -1;
      url = router!.url;
    }
    const out = await client.chat(url, messages, maxTokens, { requestId: id, stream: true });
    busyMs += out.doneAt - out.sentAt;
    let rec: AdminDecision | undefined;
    if (router) {
      rec = router.decisionsDoc({ requestId: id }).decisions[0];
      target = rec === undefined ? -1 : f.fleet.urls.indexOf(rec.worker);
    }
    if (out.status !== 200 || target < 0 || out.cachedTokens === undefined) {
      r.errors++;
      return;
    }
    r.requests++;
    r.cached += out.cachedTokens;
    r.prompt += out.promptTokens ?? tokens.length;
    if (rec?.decision === 'cache_worker_queued') r.diverted++;
    const cap = Math.floor((tokens.length - 1) / BS);
    if (gapCase) {
      r.gapCases++;
      if (known[target] === deepestKnown) r.gapToComputing++;
      else r.gapLostTokens += Math.max(0, Math.min(deepestKnown, cap) * BS - out.cachedTokens);
    }
    if (arm === 'events' && rec) {
      const seen = (e: number): number => rec!.candidates.find((c) => c.worker === f.fleet.urls[e])?.matched_blocks ?? 0;
      const lagging = held.some((h, e) => h > seen(e));
      if (lagging) {
        r.lagCases++;
        if (held[target]! < deepestHeld && held.some((h, e) => h === deepestHeld && seen(e) < h)) r.lagMisses++;
      }
      if (known.some((k, e) => seen(e) > k)) r.overCases++;
    }
    if (last) histories.delete(session);
    else histories.set(session, [...history, { role: 'user', content: userMessage }, { role: 'assistant', content: out.reply }]);
  };

  // Open loop: each arrival is sent at its time; a session's turns still go in order,
  // each after the previous reply (held meanwhile), as the traffic driver sends them.
  const sent: Array<Promise<void>> = [];
  for (let i = 0; i < REQUESTS; i++) {
    const a = workload.next();
    const wait = t0 + a.at * 1000 - performance.now();
    if (wait > 0) await sleep(wait);
    const before = tails.get(a.session) ?? Promise.resolve();
    const turn = before.then(() => one(a.session, a.family, a.userMessage, a.maxTokens, a.last)).catch(() => void r.errors++);
    tails.set(a.session, turn);
    sent.push(turn);
  }
  await Promise.all(sent);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  loop.disable();
  r.seconds = wall / 1000;
  r.meanInFlight = busyMs / wall;
  r.cpuPct = (100 * (cpu.user + cpu.system)) / 1000 / wall;
  r.loopP99Ms = loop.percentile(99) / 1e6;
  await client.close();
  await f.close();
  return r;
}

/**
 * The oracle's pick: the engine holding or computing the longest prefix, if that is
 * credited at least the affinity threshold and the engine is waiting below the limit
 * (least loaded, then at random, among equals); else the least loaded engine below
 * the limit (all engines if none is). It reads the engines themselves, at once.
 */
function oracleChoice(known: number[], watch: EngineWatch, credit: (blocks: number) => number, rng: Rng): number {
  const waiting = watch.waiting();
  const load = watch.load();
  const open = known.map((_, e) => e).filter((e) => waiting[e]! < LIMIT);
  const pool = open.length > 0 ? open : known.map((_, e) => e);
  const affine = pool.filter((e) => credit(known[e]!) >= MIN_MATCHED);
  const from = affine.length > 0 ? affine : pool;
  const bestDepth = affine.length > 0 ? Math.max(...affine.map((e) => known[e]!)) : 0;
  const deep = from.filter((e) => affine.length === 0 || known[e] === bestDepth);
  const least = Math.min(...deep.map((e) => load[e]!));
  const ties = deep.filter((e) => load[e] === least);
  return ties[rng.int(ties.length)]!;
}

// ------------------------------------------------------------------ report

console.log(
  `node ${process.version}; ${WORKERS} simulated SGLang engines in the bench's process at --speedup ${SPEEDUP} (the modelled H100), ${KV_BLOCKS} KV blocks of ${BS} tokens, KV events and LoadStat pushed; ` +
    `one router in the same process, --policy cache_aware --worker-queue-limit ${LIMIT}, under events --predicted-prefix-ttl-ms ${TTLS.join(' and ')}; requests sent by the bench's undici client, also in that process (one thread for all of it, on a 2-core machine)`,
);

const figures: Record<string, number | string> = { part: PART, predicted_prefix_ttl_ms: TTLS.join(',') };
const goals: GoalVerdict[] = [];
const slug = (a: Arm, stream = true): string =>
  `${a.kind.replace(/-/g, '_')}${a.kind === 'events' ? `_ttl_${a.ttlMs}` : ''}${stream ? '' : '_whole'}`;
const points = (x: number, n: number): number => Number(((100 * x) / Math.max(1, n)).toFixed(1));

if (PART.includes('a')) {
  console.log('');
  console.log(
    `(a) bursts of ${SIBLINGS} siblings sharing a new ${SYSTEM_TOKENS.toLocaleString('en')}-token system prompt, ${TRIALS} trials per stagger; figures per sibling (every request but the first routed)`,
  );
  console.log('');
  console.log(
    "| index from | responses | stagger | siblings | to the first's engine | routed before the index held the prefix | routed blind (no owner credited) | of those, a cache_miss the first's engine then held | gate diversions | engine cached / prompt tokens | reusable | prefix in the index after (median) |",
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const arms: Array<[Arm, boolean]> = [
    ...TTLS.map((ttlMs): [Arm, boolean] => [{ kind: 'events', ttlMs }, true]),
    [{ kind: 'requests', ttlMs: 0 }, true],
    [{ kind: 'requests', ttlMs: 0 }, false],
  ];
  for (const [arm, stream] of arms) {
    const rows = await bursts(arm, stream);
    let worstLoss = 0;
    for (const [stagger, b] of rows) {
      figures[`burst_${slug(arm, stream)}_stagger_${stagger}ms_cached_pct`] = points(b.cached, b.prompt);
      worstLoss = Math.max(worstLoss, points(b.reusable, b.prompt) - points(b.cached, b.prompt));
      const gap = b.gapMs.length > 0 ? `${median(b.gapMs).toFixed(0)} ms` : '–';
      console.log(
        `| ${armLabel(arm)} | ${stream ? 'streamed' : 'whole'} | ${stagger} ms | ${b.siblings} | ${pct(b.same, b.siblings)} | ${b.early} (${pct(b.early, b.siblings)}) | ${b.blind} (${pct(b.blind, b.siblings)}) | ${b.blindThenHeld} | ${b.diverted} | ${pct(b.cached, b.prompt)} | ${pct(b.reusable, b.prompt)} | ${gap}${b.gapUnseen > 0 ? ` (${b.gapUnseen} never)` : ''} |`,
      );
    }
    figures[`burst_${slug(arm, stream)}_worst_points_lost`] = Number(worstLoss.toFixed(1));
    // The issue's rule: the gap may cost a burst at most 2 points of cached tokens; the predicted entry is what keeps it there.
    if (arm.kind === 'events' && arm.ttlMs > 0)
      goals.push(
        atMost(
          `the event gap costs a burst, --predicted-prefix-ttl-ms ${arm.ttlMs} (points of cached tokens, worst stagger)`,
          Number(worstLoss.toFixed(1)),
          2,
        ),
      );
  }
}

if (PART.includes('b')) {
  console.log('');
  console.log(
    `(b) hot-prefix conversations (${FAMILIES} system prompts of 500–2,000 tokens, Zipf 1.1, up to 4 turns, 64 sessions open), ${REQUESTS} streamed requests per run, Poisson arrivals at each rate (no bursts), each turn after the previous reply`,
  );
  console.log('');
  console.log(
    '| arrivals | routed by | requests | mean in flight | engine cached / prompt tokens | an engine was computing a deeper prefix than any held | of those, sent to it | tokens those sent elsewhere lost, in points | router credited an engine with fewer blocks than it held | of those, sent past the deepest holder | router credited an engine with more blocks than it held or had inside it | gate diversions | bench process CPU | event-loop delay p99 | seconds |',
  );
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const arms: Arm[] = [
    ...TTLS.map((ttlMs): Arm => ({ kind: 'events', ttlMs })),
    { kind: 'requests', ttlMs: 0 },
    { kind: 'oracle-caches', ttlMs: 0 },
    { kind: 'oracle', ttlMs: 0 },
  ];
  const verdicts: string[] = [];
  for (const c of RATES) {
    const share = new Map<string, number>();
    const lost = new Map<string, number>();
    for (const arm of arms) {
      const x = await conversations(arm, c);
      const label = armLabel(arm);
      share.set(label, (100 * x.cached) / Math.max(1, x.prompt));
      lost.set(label, (100 * x.gapLostTokens) / Math.max(1, x.prompt));
      const ev = arm.kind === 'events';
      figures[`conversations_${c}rps_${slug(arm)}_cached_pct`] = Number(share.get(label)!.toFixed(1));
      figures[`conversations_${c}rps_${slug(arm)}_gap_lost_points`] = Number(lost.get(label)!.toFixed(2));
      console.log(
        `| ${c} req/s | ${arm.kind.startsWith('oracle') ? label : `router, index from ${label}`} | ${x.requests}${x.errors > 0 ? ` (${x.errors} errors)` : ''} | ${x.meanInFlight.toFixed(1)} | ${share.get(label)!.toFixed(1)} % | ${x.gapCases} (${pct(x.gapCases, x.requests)}) | ${pct(x.gapToComputing, x.gapCases)} | ${lost.get(label)!.toFixed(2)} | ${ev ? `${x.lagCases} (${pct(x.lagCases, x.requests)})` : '–'} | ${ev ? x.lagMisses : '–'} | ${ev ? `${x.overCases} (${pct(x.overCases, x.requests)})` : '–'} | ${arm.kind.startsWith('oracle') ? '–' : x.diverted} | ${x.cpuPct.toFixed(0)} % of a core | ${x.loopP99Ms.toFixed(1)} ms | ${x.seconds.toFixed(1)} |`,
      );
    }
    const req = share.get('requests')!;
    const oracle = share.get(armLabel({ kind: 'oracle', ttlMs: 0 }))!;
    const oracleCaches = share.get(armLabel({ kind: 'oracle-caches', ttlMs: 0 }))!;
    const events = TTLS.map((ttlMs) => armLabel({ kind: 'events', ttlMs }));
    verdicts.push(
      `${c} req/s: ${events.map((l) => `${l} ${share.get(l)!.toFixed(1)} % cached (− requests ${(share.get(l)! - req).toFixed(1)}, − oracle ${(share.get(l)! - oracle).toFixed(1)} points; the gap's misroutes lost ${lost.get(l)!.toFixed(2)} points)`).join(', ')}; ` +
        `requests ${req.toFixed(1)} %, oracle ${oracle.toFixed(1)} % (caches only ${oracleCaches.toFixed(1)} %): ` +
        `what knowing the prompts inside the engines adds to an oracle that knows their caches: ${(oracle - oracleCaches).toFixed(1)} points` +
        (events.length > 1
          ? `; ${events
              .slice(1)
              .map((l) => `${l} − ${events[0]}: ${(share.get(l)! - share.get(events[0]!)!).toFixed(2)} points`)
              .join(', ')}`
          : ''),
    );
  }
  console.log(`\n${verdicts.join('\n')}`);
}
writeResult('event-gap', {
  figures,
  goals,
  bottleneck: 'client, router and engines share one Node thread; the event-loop delay adds to the gap',
});
