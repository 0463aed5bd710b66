/**
 * `npm run perf -- replicas --late`: the time a router replica started after the engines takes to
 * agree with one that was there all along. The fleet is simulated SGLang engines
 * publishing KV events as SGLang does (tagged maps, SGLang's SHA-256 page hashes, a
 * replay socket named only in kv_events_config); the replicas index from the events
 * (`prefixSource: 'events'`). Traffic is /generate with token ids, which needs no
 * tokenizer, through the running replica until its index holds the target number of
 * blocks. Then, for a few rounds:
 *
 * - late: a second replica starts; the time from its start() until its /admin/state
 *   prefix_index.digest equals the running one's, polled every 10 ms;
 * - restarted mid-run: that replica is closed, more traffic goes through the running
 *   one, and a new replica starts in its place: the same time again;
 * - and, on a fleet whose replay buffer holds fewer batches than were published, what
 *   the late replica reports (workers[].kv_events.catch_up) and how many blocks it
 *   holds against the running replica.
 *
 * Flags: --targets 500,5000,50000 (blocks the running replica's index holds first),
 * --rounds 5, --workers 4, --kv-blocks 16384 and --block-size 16 (each engine's KV;
 * SGLang's default page is 1: --block-size 1 --kv-blocks 262144), --replay-buffer
 * (batches a rank keeps in the partial case; 0, the default, is half what a rank
 * published at the target), --concurrency 8, --speedup 50, --prompt-min 400,
 * --prompt-spread 800.
 */
import { cpus } from 'node:os';
import { defaultConfig } from '../../src/config/index.js';
import type { AdminState } from '../../src/contract/index.js';
import { replayFrom } from '../../src/engines/index.js';
import { Router, silentLogger } from '../../src/router/index.js';
import { Rng, startSimFleet } from '../../src/sim/index.js';
import type { SimFleet } from '../../src/sim/index.js';
import { benchArg } from './args.js';
import { writeResult } from './results.js';

const TARGETS = benchArg('targets', '500,5000,50000').split(',').map(Number);
const ROUNDS = Number(benchArg('rounds', '5'));
const WORKERS = Number(benchArg('workers', '4'));
const KV_BLOCKS = Number(benchArg('kv-blocks', '16384'));
const BLOCK_SIZE = Number(benchArg('block-size', '16'));
/** Batches each rank's replay socket keeps in the partial catch-up; 0: half what a rank published at the target. */
const REPLAY_BUFFER = Number(benchArg('replay-buffer', '0'));
const CONCURRENCY = Number(benchArg('concurrency', '8'));
const SPEEDUP = Number(benchArg('speedup', '50'));
/** Prompt lengths in tokens: uniform in [MIN, MIN + SPREAD). */
const PROMPT_MIN = Number(benchArg('prompt-min', '400'));
const PROMPT_SPREAD = Number(benchArg('prompt-spread', '800'));
const POLL_MS = 10;

const PUSH = { kvEvents: true, kvFormat: 'map' as const, loadPublish: true, topic: 'kv' };

function replica(fleet: SimFleet): Router {
  const config = {
    ...defaultConfig(),
    host: '127.0.0.1',
    workerUrls: fleet.urls,
    port: 0,
    policy: 'cache_aware' as const,
    workerQueueLimit: 64,
    prefixSource: 'events' as const,
    shutdownDrainSecs: 0,
    tui: false,
  };
  return new Router({ config, log: silentLogger, version: 'bench' });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const batchesOf = (s: AdminState): number => s.workers.reduce((a, w) => a + (w.kv_events?.batches_total ?? 0), 0);

/** Once the replica's event batches have stopped coming (unchanged over 100 ms). */
async function settled(r: Router): Promise<void> {
  let last = -1;
  for (;;) {
    const now = batchesOf(r.state());
    if (now === last) return;
    last = now;
    await sleep(100);
  }
}

/**
 * /generate requests of fresh random token ids through `r`, CONCURRENCY at a time,
 * until `done` says so (checked before each request); then waits for the events to
 * settle at `r`.
 */
async function trafficWhile(r: Router, more: (s: AdminState) => boolean, rng: Rng): Promise<void> {
  let failed = 0;
  const client = async (): Promise<void> => {
    while (more(r.state())) {
      const ids = Array.from({ length: PROMPT_MIN + rng.int(PROMPT_SPREAD) }, () => 1 + rng.int(150_000));
      const res = await fetch(`${r.url}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input_ids: ids, sampling_params: { max_new_tokens: 2 } }),
      });
      await res.arrayBuffer();
      if (res.status !== 200 && ++failed > 100) throw new Error(`/generate answered ${res.status} (${failed} failures)`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  await settled(r);
}

/** Traffic until the index holds `blocks` blocks (the fleet's KV must hold them: evictions keep it below). */
async function trafficUntil(r: Router, blocks: number, rng: Rng): Promise<void> {
  if (blocks > 0.95 * WORKERS * KV_BLOCKS)
    throw new Error(`${blocks} blocks do not fit in ${WORKERS} engines of ${KV_BLOCKS} KV blocks (--kv-blocks)`);
  await trafficWhile(r, (s) => s.prefix_index.blocks < blocks, rng);
}

/** Traffic until `batches` more event batches were published (stored or removed: it ends even with a full KV cache). */
async function trafficBatches(r: Router, batches: number, rng: Rng): Promise<void> {
  const until = batchesOf(r.state()) + batches;
  await trafficWhile(r, (s) => batchesOf(s) < until, rng);
}

async function adminState(r: Router): Promise<AdminState> {
  const res = await fetch(`${r.url}/admin/state`);
  return (await res.json()) as AdminState;
}

interface Agreement {
  /** start() called → its promise resolved. */
  startMs: number;
  /** start() called → every worker's catch-up done (kv_events.catch_up no longer pending). */
  verdictMs: number;
  /** start() called → /admin/state digest equal to the running replica's. */
  agreeMs: number;
  replayed: number;
  catchUp: string[];
  /** What the running replica held and had received when this one agreed with it. */
  blocks: number;
  pairs: number;
  published: number;
}

/** Start a replica and time it until its digest equals `want`'s (which is quiet). */
async function timeToAgree(fleet: SimFleet, want: Router, timeoutMs = 60_000): Promise<{ agreement: Agreement; late: Router }> {
  const target = want.state().prefix_index.digest;
  const late = replica(fleet);
  const t0 = performance.now();
  await late.start();
  const startMs = performance.now() - t0;
  let verdictMs = NaN;
  for (;;) {
    const s = await adminState(late);
    if (Number.isNaN(verdictMs) && s.workers.every((w) => w.kv_events !== null && w.kv_events.catch_up !== 'pending'))
      verdictMs = performance.now() - t0;
    if (s.prefix_index.digest === target) {
      const agreeMs = performance.now() - t0;
      if (Number.isNaN(verdictMs)) verdictMs = agreeMs;
      return {
        late,
        agreement: {
          startMs,
          verdictMs,
          agreeMs,
          replayed: s.workers.reduce((a, w) => a + (w.kv_events?.replayed_at_start_total ?? 0), 0),
          catchUp: s.workers.map((w) => w.kv_events?.catch_up ?? 'none'),
          blocks: s.prefix_index.blocks,
          pairs: s.prefix_index.owner_pairs,
          published: batchesOf(want.state()),
        },
      };
    }
    if (performance.now() - t0 > timeoutMs) {
      await late.close();
      throw new Error(
        `no agreement within ${timeoutMs} ms: digest ${s.prefix_index.digest} (${s.prefix_index.blocks} blocks) against ${target} (${want.state().prefix_index.blocks}); catch-up ${s.workers.map((w) => w.kv_events?.catch_up).join(',')}`,
      );
    }
    await sleep(POLL_MS);
  }
}

const pct = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const ms = (v: number): string => (v >= 100 ? `${v.toFixed(0)} ms` : `${v.toFixed(1)} ms`);
const n = (v: number): string => v.toLocaleString('en');

interface Row {
  scenario: string;
  agreements: Agreement[];
  /** The replay requests alone, every rank's at once, as the bench makes them (no decoding, no index): p50 over the rounds. */
  replayMs?: number;
}

/** One value, or the range over the rounds. */
function span(xs: number[]): string {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? n(lo) : `${n(lo)}–${n(hi)}`;
}

function row(r: Row): string {
  const a = r.agreements;
  const agree = a.map((x) => x.agreeMs);
  const start = a.map((x) => x.startMs);
  const verdict = a.map((x) => x.verdictMs);
  return (
    `| ${r.scenario} | ${span(a.map((x) => x.blocks))} | ${span(a.map((x) => x.pairs))} | ${span(a.map((x) => x.published))} | ${span(a.map((x) => x.replayed))} | ` +
    `${r.replayMs === undefined ? '–' : ms(r.replayMs)} | ${ms(pct(start, 0.5))} | ${ms(pct(verdict, 0.5))} | **${ms(pct(agree, 0.5))}** | ${ms(Math.max(...agree))} | ${a.length} | ${[...new Set(a.flatMap((x) => x.catchUp))].join(', ')} |`
  );
}

/** The bench's fleet: simulated engines posing as SGLang, with a replay buffer of `replayBuffer` batches when given. */
function sglangFleet(seed: number, replayBuffer?: number): Promise<SimFleet> {
  return startSimFleet({
    workers: WORKERS,
    speedup: SPEEDUP,
    kvBlocks: KV_BLOCKS,
    blockSize: BLOCK_SIZE,
    seed,
    push: replayBuffer === undefined ? PUSH : { ...PUSH, replayBuffer },
    asSglang: true,
  });
}

async function agreementRows(target: number, seed: number): Promise<Row[]> {
  const fleet = await sglangFleet(seed);
  const running = replica(fleet);
  await running.start();
  const rng = new Rng(seed);
  try {
    await trafficUntil(running, target, rng);
    // The replay requests on their own: one DEALER request per rank, all at once.
    const endpoints = fleet.servers.flatMap((srv) => srv.engine.ranks.map((_, rank) => srv.engine.push!.replayEndpoint(rank)));
    const replay: number[] = [];
    for (let k = 0; k < ROUNDS; k++) {
      const t0 = performance.now();
      const got = await Promise.all(endpoints.map((e) => replayFrom(e, 0, 2000)));
      replay.push(performance.now() - t0);
      if (!got.every((g) => g.complete)) throw new Error('a replay did not complete');
    }
    const late: Row = { scenario: 'late replica', agreements: [], replayMs: pct(replay, 0.5) };
    const restarted: Row = { scenario: 'restarted mid-run', agreements: [] };
    for (let k = 0; k < ROUNDS; k++) {
      const { agreement, late: r } = await timeToAgree(fleet, running);
      late.agreements.push(agreement);
      await r.close();
    }
    // Restarted mid-run: the replica is down while another tenth of the batches so far goes by
    // (counted in batches: once the KV cache is full, new blocks evict old ones).
    const tenth = Math.max(8, Math.round(batchesOf(running.state()) / 10));
    for (let k = 0; k < ROUNDS; k++) {
      const { late: r } = await timeToAgree(fleet, running);
      await r.close();
      await trafficBatches(running, tenth, rng);
      const again = await timeToAgree(fleet, running);
      restarted.agreements.push(again.agreement);
      await again.late.close();
    }
    return [late, restarted];
  } finally {
    await running.close();
    await fleet.close();
  }
}

interface PartialResult {
  target: number;
  published: number;
  catchUp: string[];
  missed: number;
  replayed: number;
  lateBlocks: number;
  runningBlocks: number;
  verdictMs: number;
}

async function partialCatchUp(target: number, buffer: number, seed: number): Promise<PartialResult> {
  const fleet = await sglangFleet(seed, buffer);
  const running = replica(fleet);
  await running.start();
  try {
    const rng = new Rng(seed);
    await trafficUntil(running, target, rng);
    // Until every rank published at least twice what its buffer keeps.
    await trafficWhile(running, (s) => s.workers.some((w) => (w.kv_events?.batches_total ?? 0) < 2 * buffer), rng);
    const late = replica(fleet);
    const t0 = performance.now();
    await late.start();
    let s = await adminState(late);
    while (s.workers.some((w) => w.kv_events === null || w.kv_events.catch_up === 'pending')) {
      await sleep(POLL_MS);
      s = await adminState(late);
    }
    const verdictMs = performance.now() - t0;
    await settled(late);
    s = await adminState(late);
    const kv = s.workers.map((w) => w.kv_events!);
    const result: PartialResult = {
      target,
      published: batchesOf(running.state()),
      catchUp: kv.map((k) => k.catch_up),
      missed: kv.reduce((a, k) => a + k.catch_up_missed_batches, 0),
      replayed: kv.reduce((a, k) => a + k.replayed_at_start_total, 0),
      lateBlocks: s.prefix_index.blocks,
      runningBlocks: running.state().prefix_index.blocks,
      verdictMs,
    };
    await late.close();
    return result;
  } finally {
    await running.close();
    await fleet.close();
  }
}

export async function lateReplicaBench(): Promise<void> {
  console.log(
    `node ${process.version}; ${WORKERS} simulated SGLang engines (--as-sglang, KV events as tagged maps, replay socket from kv_events_config), ${n(KV_BLOCKS)} KV blocks of ${BLOCK_SIZE} tokens each; ` +
      `/generate with ${PROMPT_MIN}–${PROMPT_MIN + PROMPT_SPREAD} fresh random token ids, ${CONCURRENCY} at a time, through the running replica; ${ROUNDS} rounds; digest polled every ${POLL_MS} ms`,
  );
  console.log('');
  console.log(
    '| target | replica | blocks stored | (block, owner) pairs | batches published | batches replayed | replay requests alone p50 | start() p50 | catch-up done p50 | time to agree p50 | max | rounds | catch-up |',
  );
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  const published = new Map<number, number>();
  const figures: Record<string, number | string> = { block_size: BLOCK_SIZE, rounds: ROUNDS, workers: WORKERS };
  for (const [i, target] of TARGETS.entries()) {
    const rows = await agreementRows(target, 101 + i);
    for (const r of rows) console.log(`| ${n(target)} |${row(r).slice(1)}`);
    for (const [r, who] of [
      [rows[0]!, 'late'],
      [rows[1]!, 'restarted'],
    ] as const) {
      const agree = r.agreements.map((x) => x.agreeMs);
      figures[`target_${target}_${who}_agree_p50_ms`] = Number(pct(agree, 0.5).toFixed(1));
      figures[`target_${target}_${who}_agree_max_ms`] = Number(Math.max(...agree).toFixed(1));
      figures[`target_${target}_${who}_catch_up`] = [...new Set(r.agreements.flatMap((x) => x.catchUp))].join(', ');
    }
    published.set(target, rows[0]!.agreements[0]!.published);
  }
  console.log('');
  console.log(
    `A replay buffer (push option replayBuffer; SGLang's buffer_steps) smaller than the batches published: ${REPLAY_BUFFER > 0 ? `${REPLAY_BUFFER} batches a rank` : 'half the batches a rank published at the target above'}; traffic goes on until each rank published at least twice its buffer:`,
  );
  console.log('');
  console.log(
    '| target | replay buffer a rank | blocks stored (running replica) | batches published | batches replayed | catch_up | missed batches | blocks held: late / running | held | time to verdict |',
  );
  console.log('|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|');
  for (const [i, target] of TARGETS.entries()) {
    const buffer = REPLAY_BUFFER > 0 ? REPLAY_BUFFER : Math.max(1, Math.floor(published.get(target)! / WORKERS / 2));
    const p = await partialCatchUp(target, buffer, 201 + i);
    console.log(
      `| ${n(p.target)} | ${n(buffer)} | ${n(p.runningBlocks)} | ${n(p.published)} | ${n(p.replayed)} | ${[...new Set(p.catchUp)].join(', ')} | ${n(p.missed)} | ${n(p.lateBlocks)} / ${n(p.runningBlocks)} | ${((100 * p.lateBlocks) / p.runningBlocks).toFixed(1)} % | ${ms(p.verdictMs)} |`,
    );
    figures[`target_${target}_partial_held_pct`] = Number(((100 * p.lateBlocks) / p.runningBlocks).toFixed(1));
    figures[`target_${target}_partial_missed_batches`] = p.missed;
  }
  writeResult('replicas-late', {
    figures,
    bottleneck:
      "up to ~5K blocks the replica's start() and the 10 ms poll; above, decoding the replayed batches on the replica's one thread",
  });
  console.log('');
  console.log(
    'Limits: the catch-up is one ZMQ DEALER request per rank, answered with every buffered batch in order (the replay requests alone, all ranks at once, take the ' +
      '"replay requests alone" column), then decoded and applied on the replica\'s one thread; before that the replica starts and finds the workers over HTTP, ' +
      `and the digest is read every ${POLL_MS} ms. The engines, both replicas and this driver share the machine's ${cpus().length} cores.`,
  );
}
