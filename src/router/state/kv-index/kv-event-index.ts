import { foldHash } from '../../../prefix/index.js';
import { KvEventFeed, kvEventsEndpoint } from '../../../engines/index.js';
import type { EngineKind, KvCatchUp, KvEventBatch, KvFeedStats, PushInfo } from '../../../engines/index.js';
import type { Logger } from '../../logging/logger.js';
import type { Worker } from '../../upstream/worker.js';
import type { PrefixIndex } from '../prefix-index/index.js';
import { TokenKeyedBlocks } from './token-keyed-blocks.js';

/** One publisher the index listens to: a worker's DP rank, with its own owner slot. */
interface Owner {
  readonly worker: Worker;
  readonly rank: number;
  readonly feed: KvEventFeed;
  readonly endpoint: string;
  /** Set when the engine's hashes cannot be computed: blocks are keyed by their tokens. */
  readonly byTokens: TokenKeyedBlocks | undefined;
  /** Stored blocks whose parent was never seen (keyed by tokens only). */
  unplaced: number;
  /** Stored blocks that are not plain token blocks of the router's size (keyed by tokens only). */
  unkeyed: number;
}

/** How a worker's events are keyed: by the engine's own hashes, or by the tokens they carry. */
export type KvKeying = 'engine_hash' | 'tokens';

/** What the admin state shows about a worker's KV event feeds. */
export interface KvEventsStatus {
  readonly endpoints: readonly string[];
  readonly replayEndpoints: readonly string[];
  readonly keying: KvKeying;
  /** Tokens per block of the worker's events, as it advertises them. */
  readonly blockSize: number;
  /** Now minus the engine's timestamp on its laggiest rank's last batch; null before every rank sent one. */
  readonly lagSeconds: number | null;
  readonly stats: KvFeedStats;
  readonly unplacedBlocks: number;
  readonly unkeyedBlocks: number;
}

export interface KvEventIndexOptions {
  /** Engine hashes remembered per rank when keying by tokens (the prefix index's own bound). */
  maxBlocks: number;
}

/** One worker's feeds: where it publishes, and how its blocks are keyed. */
export interface KvAttachment {
  readonly info: PushInfo;
  readonly engine: EngineKind;
  /** One per DP rank, or none: gaps then go unrepaired and a late start begins empty. */
  readonly replayEndpoints: readonly string[];
  /** `engine_hash`: the events' hashes are the keys (the router computes requests' keys the engine's way); `tokens`: blocks are keyed by their tokens. */
  readonly keying: KvKeying;
  /** Tokens per block of the events, as the engine advertises them. */
  readonly blockSize: number;
}

/**
 * The prefix index built from the engines' own KV events (docs/routing.md
 * §Prefix from engine events): each worker's DP rank is an owner; `BlockStored` on the
 * GPU tier makes it an owner of each block, `BlockRemoved` takes that away,
 * `AllBlocksCleared` and a restarted publisher forget the rank. What the index then
 * says a worker holds is what its engine said it holds, evictions and restarts
 * included, and two routers fed by the same engines hold the same index.
 */
export class KvEventIndex {
  readonly #index: PrefixIndex;
  readonly #log: Logger;
  readonly #owners: Array<Owner | undefined> = [];
  readonly #byWorker = new Map<Worker, { slots: number[]; attachment: KvAttachment }>();
  readonly #free: number[] = [];
  /** Block keys of one event, reused. */
  #keys = new Float64Array(64);

  readonly #opts: KvEventIndexOptions;

  constructor(index: PrefixIndex, log: Logger, opts: KvEventIndexOptions) {
    this.#index = index;
    this.#log = log;
    this.#opts = opts;
  }

  /** Subscribe to every rank of a worker's KV events; replaces an earlier subscription. */
  attach(worker: Worker, a: KvAttachment): void {
    this.detach(worker);
    const slots: number[] = [];
    const { info } = a;
    for (let rank = 0; rank < info.dpSize; rank++) {
      const slot = this.#free.pop() ?? this.#owners.length;
      this.#index.setOwnerTag(slot, `${worker.url}#${rank}`);
      const replay = a.replayEndpoints[rank];
      const endpoint = kvEventsEndpoint(worker.url, info, rank);
      const byTokens = a.keying === 'tokens' ? new TokenKeyedBlocks(a.blockSize, this.#opts.maxBlocks) : undefined;
      const feed = new KvEventFeed(
        {
          endpoint,
          bind: info.kvBind === true,
          topic: info.kvTopic,
          engine: a.engine,
          tokens: byTokens !== undefined,
          ...(replay !== undefined ? { replayEndpoint: replay } : {}),
        },
        { batch: (b) => this.#apply(slot, b), reset: () => this.#forget(slot, worker, rank, 'the publisher restarted') },
      );
      this.#owners[slot] = { worker, rank, feed, endpoint, byTokens, unplaced: 0, unkeyed: 0 };
      slots.push(slot);
    }
    this.#byWorker.set(worker, { slots, attachment: a });
  }

  detach(worker: Worker): void {
    const slots = this.#byWorker.get(worker)?.slots;
    if (!slots) return;
    for (const slot of slots) {
      this.#owners[slot]!.feed.close();
      this.#index.forgetWorker(slot);
      this.#owners[slot] = undefined;
      this.#free.push(slot);
    }
    this.#byWorker.delete(worker);
  }

  close(): void {
    for (const w of [...this.#byWorker.keys()]) this.detach(w);
  }

  /** The worker an owner slot belongs to (a match names owners, not workers). */
  workerAt(slot: number): Worker | undefined {
    return this.#owners[slot]?.worker;
  }

  status(worker: Worker): KvEventsStatus | undefined {
    const attached = this.#byWorker.get(worker);
    if (!attached) return undefined;
    const owners = attached.slots.map((s) => this.#owners[s]!);
    const feeds = owners.map((o) => o.feed);
    const sum = (k: keyof Omit<KvFeedStats, 'lastError' | 'lastSeq' | 'catchUp' | 'lastBatchTs'>): number =>
      feeds.reduce((a, f) => a + f.stats[k], 0);
    const stamps = feeds.map((f) => f.stats.lastBatchTs);
    // The rank heard from longest ago: a worker is as current as its laggiest rank.
    const oldest = stamps.includes(undefined) ? undefined : Math.min(...(stamps as number[]));
    return {
      lagSeconds: oldest === undefined ? null : Math.max(0, Date.now() / 1000 - oldest),
      endpoints: owners.map((o) => o.endpoint),
      replayEndpoints: attached.attachment.replayEndpoints,
      keying: attached.attachment.keying,
      blockSize: attached.attachment.blockSize,
      unplacedBlocks: owners.reduce((a, o) => a + o.unplaced, 0),
      unkeyedBlocks: owners.reduce((a, o) => a + o.unkeyed, 0),
      stats: {
        batches: sum('batches'),
        events: sum('events'),
        skippedEvents: sum('skippedEvents'),
        decodeErrors: sum('decodeErrors'),
        gaps: sum('gaps'),
        gapsRepaired: sum('gapsRepaired'),
        gapsLost: sum('gapsLost'),
        missed: sum('missed'),
        repaired: sum('repaired'),
        lost: sum('lost'),
        resets: sum('resets'),
        replayedAtStart: sum('replayedAtStart'),
        catchUp: worstCatchUp(feeds.map((f) => f.stats.catchUp)),
        catchUpMissed: sum('catchUpMissed'),
        lastSeq: Math.max(...feeds.map((f) => f.stats.lastSeq)),
        lastBatchTs: oldest,
        lastError: feeds.map((f) => f.stats.lastError).find((e) => e !== undefined),
      },
    };
  }

  #apply(slot: number, batch: KvEventBatch): void {
    const owner = this.#owners[slot]!;
    for (const e of batch.events) {
      if (e.kind === 'cleared') {
        this.#index.forgetWorker(slot);
        owner.byTokens?.clear();
        continue;
      }
      // Only the GPU tier (or an engine that does not say) serves a prefix without a reload.
      if (e.medium !== null && e.medium !== 'GPU') continue;
      const n = e.hashes.count;
      if (this.#keys.length < n) this.#keys = new Float64Array(Math.max(n, this.#keys.length * 2));
      const keys = this.#keys;
      const w = e.hashes.words;
      const byTokens = owner.byTokens;
      if (byTokens !== undefined) {
        if (e.kind === 'removed') {
          for (let i = 0; i < n; i++) {
            const key = byTokens.take(w[2 * i]!, w[2 * i + 1]!);
            if (key !== undefined) this.#index.removeOwner(slot, key);
          }
          continue;
        }
        const verdict = byTokens.store(e, keys);
        if (verdict.kind === 'keyed') this.#index.record(slot, keys, n);
        else if (verdict.kind === 'unplaced') owner.unplaced += n;
        else owner.unkeyed += n;
        continue;
      }
      for (let i = 0; i < n; i++) keys[i] = foldHash(w[2 * i]!, w[2 * i + 1]!);
      if (e.kind === 'stored') this.#index.record(slot, keys, n);
      else for (let i = 0; i < n; i++) this.#index.removeOwner(slot, keys[i]!);
    }
  }

  /** Called when a rank's holdings are forgotten (its engine restarted): what was predicted of the worker is void too. */
  onForget: ((worker: Worker) => void) | undefined;

  #forget(slot: number, worker: Worker, rank: number, why: string): void {
    this.#index.forgetWorker(slot);
    this.#owners[slot]?.byTokens?.clear();
    this.onForget?.(worker);
    this.#log.info('KV events: forgot what a rank held', { worker: worker.url, rank, reason: why });
  }
}

/** Worst first: a worker caught up only as well as its worst rank. */
const CATCH_UP_ORDER: readonly KvCatchUp[] = ['failed', 'partial', 'pending', 'none', 'complete'];

function worstCatchUp(outcomes: readonly KvCatchUp[]): KvCatchUp {
  for (const o of CATCH_UP_ORDER) if (outcomes.includes(o)) return o;
  return 'none';
}
