import { Publisher, Router, XPublisher } from 'zeromq';
import { encodeMsgpack, MsgpackMap } from '../msgpack/index.js';
import { sglangPageChain, simWireWords } from '../prefix/index.js';
import type { MsgpackValue } from '../msgpack/index.js';
import type { KvCacheListener } from './kv-block-cache.js';
import type { EngineCore, EngineLoad } from './engine-core.js';
import type { EngineParams } from './engine-params.js';
import type { Flavor } from './http/responses.js';

/** What the publisher reads of its engine (a SimEngine), named here so that the engine, which holds its publisher, is not imported back. */
export interface PublishingEngine {
  readonly flavor: Flavor;
  readonly ranks: readonly EngineCore[];
  readonly params: Readonly<EngineParams>;
  readonly asSglang: boolean;
  reportedLoads(): EngineLoad[];
}

/**
 * The simulated engine's push channels, as SGLang publishes them
 * (docs/simulator.md §Push channels): per DP rank, KV events on a PUB socket with a
 * replay ROUTER beside it, and `LoadStat` on a PUB socket of its own; `/server_info`
 * advertises both in its `kv_events` block, and names the replay sockets in the raw
 * `kv_events_config` server argument, as SGLang does. Ports are one contiguous range:
 * KV ranks, then replay ranks, then load ranks (where SGLang's `--load-publish-endpoint
 * auto` puts them). The envelope is `[topic, sequence (8 bytes, big-endian), msgpack
 * payload]`; payloads are byte for byte what the engine of the simulated flavour
 * writes, positional (`array`) or tagged (`map`).
 */
export interface PushOptions {
  /** Address to bind (the fleet's host). */
  host: string;
  kvEvents: boolean;
  kvFormat: 'array' | 'map';
  loadPublish: boolean;
  topic: string;
  /** First port of the range (KV ranks, replay ranks, load ranks); a free range is picked when absent. */
  port?: number;
  /** Batches each rank's replay socket keeps (SGLang's and vLLM's `buffer_steps`); DEFAULT_REPLAY_BUFFER when absent. */
  replayBuffer?: number;
}

/** How often the load publisher looks at the ranks; SGLang floors its own compute at 50 ms. */
const LOAD_TICK_MS = 50;
/** An unchanged reading is re-sent this often (SGLang's heartbeat). */
const LOAD_HEARTBEAT_MS = 1000;
/** Batches the replay socket keeps unless told otherwise (both engines' default buffer_steps). */
export const DEFAULT_REPLAY_BUFFER = 10_000;
const LOAD_TOPIC = 'load';

interface RankChannels {
  /** An XPUB: it sends as PUB does, and tells when a subscription has arrived. */
  kv: XPublisher | undefined;
  /** Subscriptions the KV socket has applied (it filters by them from then on). */
  kvSubscriptions: number;
  replay: Router | undefined;
  load: Publisher | undefined;
  kvSeq: number;
  loadSeq: number;
  pending: MsgpackValue[];
  flushQueued: boolean;
  /** [seq, payload] of the last replayBuffer batches, oldest first. */
  buffer: Array<[number, Buffer]>;
  /**
   * Posing as SGLang: each cached block's SGLang page digest (32 bytes), by the cache's
   * own hash. Children chain from it and BlockRemoved names it; an entry goes when its
   * block leaves the cache, so this holds at most the rank's cached blocks.
   */
  digests: Map<number, Buffer>;
  lastLoad: string;
  lastLoadAt: number;
}

export class SimPushPublisher {
  readonly #engine: PublishingEngine;
  readonly #opts: PushOptions;
  readonly #ranks: RankChannels[];
  readonly #replayBuffer: number;
  /** KV events carry SGLang's hashes (the engine poses as SGLang). */
  readonly #sglangHashes: boolean;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  base = 0;
  /** Publishing can be paused per channel (PUT /sim/push), to show a gap or a silent publisher. */
  paused = { kv: false, load: false };
  /** Batches not sent while paused: they are still numbered and kept for replay, as SGLang does on a failed send. */
  dropped = 0;

  private constructor(engine: PublishingEngine, opts: PushOptions, ranks: RankChannels[]) {
    this.#engine = engine;
    this.#opts = opts;
    this.#ranks = ranks;
    this.#replayBuffer = opts.replayBuffer ?? DEFAULT_REPLAY_BUFFER;
    this.#sglangHashes = engine.asSglang;
  }

  /** Ports one engine's channels take. */
  static portsPerEngine(opts: Pick<PushOptions, 'kvEvents' | 'loadPublish'>, dp: number): number {
    return (opts.kvEvents ? 2 * dp : 0) + (opts.loadPublish ? dp : 0);
  }

  static async start(engine: PublishingEngine, opts: PushOptions): Promise<SimPushPublisher> {
    if (opts.replayBuffer !== undefined && !(Number.isInteger(opts.replayBuffer) && opts.replayBuffer >= 1)) {
      throw new Error(`replayBuffer must be a whole number of at least 1 (got ${opts.replayBuffer})`);
    }
    const dp = engine.ranks.length;
    const blocks = SimPushPublisher.portsPerEngine(opts, dp);
    for (let attempt = 0; ; attempt++) {
      const base = opts.port ?? 20_000 + Math.floor(Math.random() * (60_000 - 20_000 - blocks));
      const ranks: RankChannels[] = [];
      try {
        for (let r = 0; r < dp; r++) {
          const ch: RankChannels = {
            kv: undefined,
            kvSubscriptions: 0,
            replay: undefined,
            load: undefined,
            kvSeq: 0,
            loadSeq: 0,
            pending: [],
            flushQueued: false,
            buffer: [],
            digests: new Map(),
            lastLoad: '',
            lastLoadAt: -Infinity,
          };
          ranks.push(ch);
          if (opts.kvEvents) {
            ch.kv = new XPublisher({ linger: 0, sendHighWaterMark: 100_000 });
            ch.kv.verbosity = 'allSubs';
            await ch.kv.bind(`tcp://${opts.host}:${base + r}`);
            ch.replay = new Router({ linger: 0 });
            await ch.replay.bind(`tcp://${opts.host}:${base + dp + r}`);
          }
          if (opts.loadPublish) {
            ch.load = new Publisher({ linger: 0, sendHighWaterMark: 8 });
            await ch.load.bind(`tcp://${opts.host}:${base + (opts.kvEvents ? 2 * dp : 0) + r}`); // = #loadBase() + r
          }
        }
      } catch (err) {
        for (const ch of ranks) for (const s of [ch.kv, ch.replay, ch.load]) s?.close();
        if (opts.port === undefined && attempt < 20) continue;
        throw err;
      }
      const p = new SimPushPublisher(engine, opts, ranks);
      p.base = base;
      p.#wire();
      return p;
    }
  }

  /**
   * The `kv_events` block of /server_info, with exactly the keys SGLang's
   * describe_kv_events_publisher writes (docs/simulator.md §Push channels): the load
   * pair only when the load publisher is on. No replay key: SGLang has none there
   * (the replay endpoint is in kvEventsConfig).
   */
  serverInfoBlock(): Record<string, unknown> | null {
    const o = this.#opts;
    const dp = this.#ranks.length;
    if (!o.kvEvents) return null;
    return {
      publisher: 'zmq',
      endpoint_host: '*',
      endpoint_port_base: this.base,
      topic: o.topic,
      block_size: this.#engine.params.blockSize,
      dp_size: dp,
      ...(o.loadPublish ? { load_endpoint_port_base: this.#loadBase(), load_topic: LOAD_TOPIC } : {}),
    };
  }

  /**
   * SGLang's `--kv-events-config` server argument as /server_info shows it (a JSON
   * string: `dataclasses.asdict(server_args)` keeps it raw): rank 0's KV and replay
   * endpoints (rank r is on port + r for both), the topic and the replay buffer's
   * size. Null when KV events are off, as the argument is then unset.
   */
  kvEventsConfig(): string | null {
    const o = this.#opts;
    if (!o.kvEvents) return null;
    return JSON.stringify({
      publisher: 'zmq',
      endpoint: `tcp://*:${this.base}`,
      replay_endpoint: `tcp://*:${this.base + this.#ranks.length}`,
      topic: o.topic,
      buffer_steps: this.#replayBuffer,
    });
  }

  /**
   * SGLang's `--load-publish-endpoint` server argument: `auto` (the range packed after
   * the KV range, past the replay range, which is where this publisher binds it), an
   * explicit endpoint when there are no KV events to pack after, null when off.
   */
  loadPublishEndpoint(): string | null {
    const o = this.#opts;
    if (!o.loadPublish) return null;
    return o.kvEvents ? 'auto' : `tcp://*:${this.#loadBase()}`;
  }

  #loadBase(): number {
    return this.base + (this.#opts.kvEvents ? 2 * this.#ranks.length : 0);
  }

  /**
   * The engine's entry for the router's --kv-events (what an operator writes for a
   * vLLM engine, which advertises nothing): endpoints as vLLM's --kv-events-config writes them.
   */
  kvEventsEntry(): { endpoint: string; 'replay-endpoint': string; topic: string; 'dp-size': number } | null {
    if (!this.#opts.kvEvents) return null;
    const dp = this.#ranks.length;
    return { endpoint: `tcp://*:${this.base}`, 'replay-endpoint': `tcp://*:${this.base + dp}`, topic: this.#opts.topic, 'dp-size': dp };
  }

  /**
   * vLLM's GET /kv_event_sources (0.32): each rank's resolved `--kv-events-config`, its
   * ports offset by the rank, as the engine answers it; `{}` when KV events are off.
   * The endpoints are wildcards: this publisher binds, as vLLM's does for a wildcard.
   */
  kvEventSources(): Record<string, unknown> {
    const o = this.#opts;
    if (!o.kvEvents) return {};
    const dp = this.#ranks.length;
    return Object.fromEntries(
      this.#ranks.map((_, r) => [
        String(r),
        {
          enable_kv_cache_events: true,
          publisher: 'zmq',
          endpoint: `tcp://*:${this.base + r}`,
          replay_endpoint: `tcp://*:${this.base + dp + r}`,
          buffer_steps: this.#replayBuffer,
          hwm: 100_000,
          max_queue_size: 100_000,
          topic: o.topic,
        },
      ]),
    );
  }

  /** Where rank r's replay socket listens (not in /server_info: SGLang does not advertise it). */
  replayEndpoint(rank: number): string {
    return `tcp://${this.#opts.host}:${this.base + this.#ranks.length + rank}`;
  }

  /**
   * What subscribers see of an engine restart: the KV cache comes back empty without
   * an event (the process that could have sent one is gone), and every channel's
   * sequence starts again at 0 with an empty replay buffer. Refused (false) while
   * requests are inside the engine.
   */
  restart(): boolean {
    if (this.#engine.ranks.some((r) => r.busy)) return false;
    for (const [r, ch] of this.#ranks.entries()) {
      const cache = this.#engine.ranks[r]!.cache;
      const listener = cache.listener;
      cache.listener = undefined;
      cache.flush();
      cache.listener = listener;
      ch.kvSeq = 0;
      ch.loadSeq = 0;
      ch.pending = [];
      ch.buffer = [];
      ch.digests.clear();
      ch.lastLoad = '';
    }
    return true;
  }

  /**
   * Whether every rank's KV socket has a subscriber. PUB drops what it publishes
   * before a subscription arrives (ZMQ's slow joiner), so a test that must not lose
   * the first batch waits for this; real engines cannot tell, and say nothing of it.
   */
  kvSubscribed(): boolean {
    return this.#ranks.every((ch) => ch.kv === undefined || ch.kvSubscriptions > 0);
  }

  async #countSubscriptions(ch: RankChannels): Promise<void> {
    try {
      // XPUB hands each subscription on once it filters by it: byte 1, then the topic.
      for await (const [message] of ch.kv!) if (message?.[0] === 1) ch.kvSubscriptions++;
    } catch {
      // Closing the socket ends the iteration.
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    for (const [r, ch] of this.#ranks.entries()) {
      this.#engine.ranks[r]!.cache.listener = undefined;
      for (const s of [ch.kv, ch.replay, ch.load]) s?.close();
    }
  }

  #wire(): void {
    for (const [r, ch] of this.#ranks.entries()) {
      if (ch.kv) {
        this.#engine.ranks[r]!.cache.listener = this.#listener(r, ch);
        void this.#serveReplay(ch);
        void this.#countSubscriptions(ch);
      }
    }
    if (this.#opts.loadPublish) {
      this.#timer = setInterval(() => this.#publishLoad(), LOAD_TICK_MS);
      this.#timer.unref();
      this.#publishLoad();
    }
  }

  #listener(rank: number, ch: RankChannels): KvCacheListener {
    const bs = this.#engine.params.blockSize;
    return {
      stored: (hashes, parent, first, sequence) => {
        const tokens = sequence();
        const end = (first + hashes.length) * bs;
        if (tokens.length < end)
          throw new Error(`KV cache stored blocks ${first}..${first + hashes.length - 1} of a ${tokens.length}-token sequence`);
        const ids = tokens.slice(first * bs, end);
        if (this.#sglangHashes) {
          const { wire, parentWire } = this.#sglangRun(ch, hashes, parent, first, tokens);
          this.#queue(rank, ch, this.#storedEvent(wire, parentWire, ids));
        } else {
          this.#queue(
            rank,
            ch,
            this.#storedEvent(
              hashes.map((h) => this.#wireHash(h)),
              parent === null ? null : this.#wireHash(parent),
              ids,
            ),
          );
        }
      },
      removed: (hashes) => {
        if (!this.#sglangHashes) {
          this.#queue(rank, ch, this.#removedEvent(hashes.map((h) => this.#wireHash(h))));
          return;
        }
        const wire: bigint[] = [];
        for (const h of hashes) {
          const d = ch.digests.get(h);
          // Every cached block was stored through this listener; one it never saw has no SGLang name to remove.
          if (d === undefined) continue;
          ch.digests.delete(h);
          wire.push(d.readBigInt64BE(0));
        }
        if (wire.length > 0) this.#queue(rank, ch, this.#removedEvent(wire));
      },
      cleared: () => {
        ch.digests.clear();
        this.#queue(rank, ch, this.#opts.kvFormat === 'map' ? new MsgpackMap([['type', 'AllBlocksCleared']]) : ['AllBlocksCleared']);
      },
    };
  }

  /**
   * A stored run's SGLang page hashes (src/prefix sglangPageChain: SHA-256 over the
   * parent's digest and each token u32-LE; published as the first 8 bytes, big-endian
   * signed), chained from the parent block's digest, and remembered under the cache's
   * own hashes. The parent is cached (the request storing the run pins it), so its
   * digest is known; were it not, the chain is computed again from the first token.
   */
  #sglangRun(
    ch: RankChannels,
    hashes: readonly number[],
    parent: number | null,
    first: number,
    tokens: readonly number[],
  ): { wire: bigint[]; parentWire: bigint | null } {
    const bs = this.#engine.params.blockSize;
    let parentDigest = parent === null ? undefined : ch.digests.get(parent);
    if (parentDigest === undefined && first > 0) parentDigest = sglangPageChain(tokens, 0, first * bs, bs, undefined, () => undefined);
    const wire: bigint[] = [];
    let i = 0;
    sglangPageChain(tokens, first * bs, (first + hashes.length) * bs, bs, parentDigest, (digest) => {
      ch.digests.set(hashes[i++]!, digest);
      wire.push(digest.readBigInt64BE(0));
    });
    return { wire, parentWire: parentDigest === undefined ? null : parentDigest.readBigInt64BE(0) };
  }

  /**
   * vLLM roots its hash chain in a NONE_HASH drawn at random per process (unless
   * PYTHONHASHSEED is set), so no router can compute its block hashes; the simulated
   * vLLM mixes a random root into its own likewise, and a router must key its blocks by
   * the tokens the events carry, as it must for the real engine.
   */
  readonly #vllmRoot = (BigInt(Math.floor(Math.random() * 0x1_0000_0000)) << 32n) | BigInt(Math.floor(Math.random() * 0x1_0000_0000));

  /** A block hash on the wire (simWireWords): signed i64 for SGLang, unsigned u64 for vLLM (with its random root). */
  #wireHash(h: number): bigint {
    const { hi, lo } = simWireWords(h);
    const v = (BigInt(hi) << 32n) | BigInt(lo);
    return this.#engine.flavor === 'vllm' ? v ^ this.#vllmRoot : BigInt.asIntN(64, v);
  }

  #storedEvent(wire: bigint[], par: bigint | null, tokenIds: readonly number[]): MsgpackValue {
    const bs = this.#engine.params.blockSize;
    const vllm = this.#engine.flavor === 'vllm';
    if (this.#opts.kvFormat === 'map') {
      const entries: Array<[string, MsgpackValue]> = [
        ['type', 'BlockStored'],
        ['block_hashes', wire],
        ['parent_block_hash', par],
        ['token_ids', tokenIds],
        ['block_size', bs],
        ['lora_id', null],
        ['medium', 'GPU'],
      ];
      if (vllm)
        entries.push(['lora_name', null], ['extra_keys', wire.map(() => null)], ['group_idx', 0], ['kv_cache_spec_kind', 'full_attention']);
      return new MsgpackMap(entries);
    }
    // vLLM positional: every field up to the spec kind (the sliding window's default is trimmed).
    return vllm
      ? ['BlockStored', wire, par, tokenIds, bs, null, 'GPU', null, wire.map(() => null), 0, 'full_attention']
      : ['BlockStored', wire, par, tokenIds, bs, null, 'GPU'];
  }

  #removedEvent(wire: bigint[]): MsgpackValue {
    const vllm = this.#engine.flavor === 'vllm';
    if (this.#opts.kvFormat === 'map')
      return new MsgpackMap([
        ['type', 'BlockRemoved'],
        ['block_hashes', wire],
        ['medium', 'GPU'],
        ...(vllm ? ([['group_idx', 0]] as Array<[string, MsgpackValue]>) : []),
      ]);
    return vllm ? ['BlockRemoved', wire, 'GPU', 0] : ['BlockRemoved', wire, 'GPU'];
  }

  /** Events of one synchronous stretch of the engine (a scheduler step) go out as one batch. */
  #queue(rank: number, ch: RankChannels, event: MsgpackValue): void {
    ch.pending.push(event);
    if (ch.flushQueued) return;
    ch.flushQueued = true;
    queueMicrotask(() => this.#flush(rank, ch));
  }

  #flush(rank: number, ch: RankChannels): void {
    ch.flushQueued = false;
    if (this.#closed || ch.pending.length === 0) return;
    const payload = encodeMsgpack([Date.now() / 1000, ch.pending, rank]);
    ch.pending = [];
    const seq = ch.kvSeq++;
    // Into the replay buffer before sending, so a batch a send loses is still replayable.
    ch.buffer.push([seq, payload]);
    if (ch.buffer.length > this.#replayBuffer) ch.buffer.shift();
    if (this.paused.kv) {
      this.dropped++;
      return;
    }
    this.#send(ch.kv!, [Buffer.from(this.#opts.topic), seqFrame(seq), payload]);
  }

  async #serveReplay(ch: RankChannels): Promise<void> {
    try {
      for await (const frames of ch.replay!) {
        const [id, , start] = frames as [Buffer, Buffer, Buffer | undefined];
        const from = start && start.length === 8 ? Number(start.readBigInt64BE(0)) : 0;
        // vLLM (0.32) puts the topic before the sequence, as on the live stream, and an empty
        // one before the end marker; SGLang's replies, as its publisher was read, carry none.
        const topic = this.#engine.flavor === 'vllm' ? [Buffer.from(this.#opts.topic)] : [];
        for (const [seq, payload] of ch.buffer)
          if (seq >= from) await ch.replay!.send([id, Buffer.alloc(0), ...topic, seqFrame(seq), payload]);
        await ch.replay!.send([id, Buffer.alloc(0), ...(topic.length > 0 ? [Buffer.alloc(0)] : []), seqFrame(-1), Buffer.alloc(0)]);
      }
    } catch {
      // Closed.
    }
  }

  #publishLoad(): void {
    if (this.#closed) return;
    const now = Date.now();
    const loads = this.#engine.reportedLoads();
    const lpm = this.#engine.flavor === 'sglang' && this.#engine.params.schedulePolicy === 'lpm';
    for (const [r, ch] of this.#ranks.entries()) {
      const l = loads[r]!;
      // SGLang withholds waiting-uncached tokens unless its schedule policy is cache-aware.
      const stat: MsgpackValue = [
        'LoadStat',
        l.running,
        l.waiting,
        l.usedTokens,
        l.maxTotalTokens,
        r,
        lpm ? l.waitingUncachedTokens : null,
      ];
      const key = JSON.stringify(stat);
      if (key === ch.lastLoad && now - ch.lastLoadAt < LOAD_HEARTBEAT_MS) continue;
      ch.lastLoad = key;
      ch.lastLoadAt = now;
      if (this.paused.load) continue;
      this.#send(ch.load!, [Buffer.from(LOAD_TOPIC), seqFrame(ch.loadSeq++), encodeMsgpack(stat)]);
    }
  }

  /**
   * zeromq takes one send at a time per socket, so sends queue behind the one under
   * way. PUB sends never wait on subscribers: past the high-water mark the socket
   * drops, as the engines' do.
   */
  #send(socket: Publisher | XPublisher, frames: Buffer[]): void {
    let q = this.#queues.get(socket);
    if (!q) this.#queues.set(socket, (q = { busy: false, frames: [] }));
    q.frames.push(frames);
    if (!q.busy) void this.#drain(socket, q);
  }

  readonly #queues = new Map<Publisher | XPublisher, { busy: boolean; frames: Buffer[][] }>();

  async #drain(socket: Publisher | XPublisher, q: { busy: boolean; frames: Buffer[][] }): Promise<void> {
    q.busy = true;
    try {
      for (let next = q.frames.shift(); next !== undefined && !this.#closed; next = q.frames.shift()) {
        await socket.send(next).catch(() => void this.dropped++);
      }
    } finally {
      q.busy = false;
    }
  }
}

function seqFrame(seq: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(seq));
  return b;
}
