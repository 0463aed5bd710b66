import type { PrefixIndex } from '../router/index.js';
import type { ManualClock, SimEngine } from '../sim/index.js';

/** What a simulated cache tells its KV-event publisher (src/sim kv-block-cache.ts). */
type KvCacheListener = NonNullable<SimEngine['ranks'][number]['cache']['listener']>;

/**
 * Step end to index, simulated ms, unless a run says otherwise. An engine publishes a
 * step's KV events as one batch when the step ends, and the router applies a batch as
 * it arrives: decoding takes microseconds and never waits on I/O (docs/engine-push.md
 * §Subscriptions). What is left is one ZMQ hop inside a cluster, well under a
 * millisecond; 1 ms rounds it up, so the event gap is the prefill's, as on real engines.
 */
export const DEFAULT_KV_EVENT_DELAY_MS = 1;

/** One event as the index applies it (KvEventIndex's decoded form, keyed already). */
type VirtualKvEvent = { kind: 'stored'; keys: readonly number[] } | { kind: 'removed'; keys: readonly number[] } | { kind: 'cleared' };

/**
 * The engines' KV events on the virtual clock (docs/bench.md §Presets): each engine's
 * cache tells its listener what it stores and evicts, the events of one synchronous
 * stretch (a scheduler step) make a batch, as the push publisher sends them, and the
 * batch reaches the router's prefix index `delayMs` later. There it does what
 * KvEventIndex does with a batch (src/router/state/kv-index/kv-event-index.ts): a
 * stored block makes the engine an owner, a removed one takes that away, a cleared
 * cache forgets the engine. The simulated cache names its blocks with the router's
 * own block keys (blockHashes of the tokens, blocks of the same size), so the keys
 * are those a router keying vLLM's events by their tokens would find.
 *
 * One owner per engine, at the engine's slot: the fleet's engines have one DP rank.
 */
export class VirtualKvEvents {
  /** Batches applied, and events in them. */
  batches = 0;
  events = 0;

  constructor(
    engines: readonly SimEngine[],
    private readonly index: PrefixIndex,
    private readonly clock: ManualClock,
    private readonly delayMs: number = DEFAULT_KV_EVENT_DELAY_MS,
  ) {
    if (!(delayMs >= 0)) throw new Error(`the KV event delay must be at least 0 ms (got ${delayMs})`);
    engines.forEach((e, slot) => {
      if (e.ranks.length !== 1) throw new Error(`virtual KV events model one DP rank per engine (engine ${slot} has ${e.ranks.length})`);
      e.ranks[0]!.cache.listener = this.#listener(slot);
    });
  }

  #listener(slot: number): KvCacheListener {
    let pending: VirtualKvEvent[] | undefined;
    let pendingAt = -1;
    const queue = (event: VirtualKvEvent): void => {
      const now = this.clock.now();
      if (pending === undefined || pendingAt !== now) {
        const batch: VirtualKvEvent[] = (pending = []);
        pendingAt = now;
        this.clock.schedule(now + this.delayMs, () => this.#apply(slot, batch));
      }
      pending.push(event);
    };
    return {
      stored: (hashes) => queue({ kind: 'stored', keys: hashes }),
      removed: (hashes) => queue({ kind: 'removed', keys: hashes }),
      cleared: () => queue({ kind: 'cleared' }),
    };
  }

  #apply(slot: number, batch: readonly VirtualKvEvent[]): void {
    this.batches++;
    for (const e of batch) {
      this.events++;
      if (e.kind === 'cleared') this.index.forgetWorker(slot);
      else if (e.kind === 'stored') this.index.record(slot, e.keys, e.keys.length);
      else for (const k of e.keys) this.index.removeOwner(slot, k);
    }
  }
}
