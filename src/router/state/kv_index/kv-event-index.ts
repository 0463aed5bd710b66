import { KvEventFeed, pushEndpoint } from '../../../engines/index.js';
import type { EngineKind, KvEventBatch, KvFeedStats, PushInfo } from '../../../engines/index.js';
import type { Logger } from '../../logging/logger.js';
import type { Worker } from '../../workers/worker.js';
import type { PrefixIndex } from '../prefix_index/index.js';
import { foldHash } from './engine-keys.js';

/** One publisher the index listens to: a worker's DP rank, with its own owner slot. */
interface Owner {
  readonly worker: Worker;
  readonly rank: number;
  readonly feed: KvEventFeed;
}

/** What the admin state shows about a worker's KV event feeds. */
export interface KvEventsStatus {
  readonly endpoints: readonly string[];
  readonly stats: KvFeedStats;
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
  readonly #byWorker = new Map<Worker, number[]>();
  readonly #free: number[] = [];
  /** Block keys of one event, reused. */
  #keys = new Float64Array(64);

  constructor(index: PrefixIndex, log: Logger) {
    this.#index = index;
    this.#log = log;
  }

  /** Subscribe to every rank of a worker's KV events; replaces an earlier subscription. */
  attach(worker: Worker, info: PushInfo, engine: EngineKind, replayEndpoints: readonly string[] = []): void {
    this.detach(worker);
    const slots: number[] = [];
    for (let rank = 0; rank < info.dpSize; rank++) {
      const slot = this.#free.pop() ?? this.#owners.length;
      this.#index.setOwnerTag(slot, `${worker.url}#${rank}`);
      const replay = replayEndpoints[rank];
      const feed = new KvEventFeed(
        { endpoint: pushEndpoint(worker.url, info, info.kvPortBase, rank), topic: info.kvTopic, engine, ...(replay !== undefined ? { replayEndpoint: replay } : {}) },
        { batch: (b) => this.#apply(slot, b), reset: () => this.#forget(slot, worker, rank, 'the publisher restarted') },
      );
      this.#owners[slot] = { worker, rank, feed };
      slots.push(slot);
    }
    this.#byWorker.set(worker, slots);
  }

  detach(worker: Worker): void {
    const slots = this.#byWorker.get(worker);
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
    const slots = this.#byWorker.get(worker);
    if (!slots) return undefined;
    const feeds = slots.map((s) => this.#owners[s]!.feed);
    const sum = (k: keyof Omit<KvFeedStats, 'lastError' | 'lastSeq'>): number => feeds.reduce((a, f) => a + f.stats[k], 0);
    return {
      endpoints: slots.map((s) => pushEndpoint(worker.url, worker.info.push!, worker.info.push!.kvPortBase, this.#owners[s]!.rank)),
      stats: {
        batches: sum('batches'),
        events: sum('events'),
        skippedEvents: sum('skippedEvents'),
        decodeErrors: sum('decodeErrors'),
        gaps: sum('gaps'),
        missed: sum('missed'),
        repaired: sum('repaired'),
        lost: sum('lost'),
        resets: sum('resets'),
        replayedAtStart: sum('replayedAtStart'),
        lastSeq: Math.max(...feeds.map((f) => f.stats.lastSeq)),
        lastError: feeds.map((f) => f.stats.lastError).find((e) => e !== undefined),
      },
    };
  }


  #apply(slot: number, batch: KvEventBatch): void {
    for (const e of batch.events) {
      if (e.kind === 'cleared') {
        this.#index.forgetWorker(slot);
        continue;
      }
      // Only the GPU tier (or an engine that does not say) serves a prefix without a reload.
      if (e.medium !== null && e.medium !== 'GPU') continue;
      const n = e.hashes.count;
      if (this.#keys.length < n) this.#keys = new Float64Array(Math.max(n, this.#keys.length * 2));
      const keys = this.#keys;
      const w = e.hashes.words;
      for (let i = 0; i < n; i++) keys[i] = foldHash(w[2 * i]!, w[2 * i + 1]!);
      if (e.kind === 'stored') this.#index.record(slot, keys, n);
      else for (let i = 0; i < n; i++) this.#index.removeOwner(slot, keys[i]!);
    }
  }

  #forget(slot: number, worker: Worker, rank: number, why: string): void {
    this.#index.forgetWorker(slot);
    this.#log.info('KV events: forgot what a rank held', { worker: worker.url, rank, reason: why });
  }
}
