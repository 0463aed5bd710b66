import type { RequestKeying } from '../request/request-keying.js';
import type { KvEventIndex } from '../state/kv-index/index.js';
import type { LoadTable } from '../state/load-monitor/index.js';
import type { PrefixIndex } from '../state/prefix-index/index.js';
import { PrefixLookup } from '../state/prefix-lookup.js';
import type { Worker } from '../upstream/worker.js';

/**
 * What the prefix index is built from, how requests are keyed for it, and how a
 * prefix's owners are found and forgotten: from requests (the router's own record,
 * owners by registry slot) until the start chooses the engines' KV events
 * (docs/routing.md §Prefix from engine events, §Keying requests).
 */
export class PrefixState {
  source: 'requests' | 'events' = 'requests';
  keying: RequestKeying;
  readonly lookup: PrefixLookup;

  constructor(
    private readonly index: PrefixIndex,
    private readonly kvIndex: KvEventIndex,
    table: LoadTable,
    /** The registry's worker in a slot, when the index is built from requests. */
    registered: (slot: number) => Worker | undefined,
    private readonly blockSize: number,
  ) {
    this.keying = { by: 'text', blockSize };
    this.lookup = new PrefixLookup(
      index,
      (slot) => (this.source === 'events' ? kvIndex.workerAt(slot) : registered(slot)),
      (w) => table.isInPool(w),
    );
    // An engine that restarted holds nothing: neither what its events said nor what the router sent it since.
    kvIndex.onForget = (w) => this.lookup.predicted?.forgetWorker(w);
  }

  /** Tokens per block of the index's keys: the workers' advertised size under events, else --block-size. */
  get keyBlockSize(): number {
    return this.keying.by === 'none' ? this.blockSize : this.keying.blockSize;
  }

  /** Tokens per block of the index's keys when requests are keyed by engine tokens; null otherwise. */
  get tokenBlockSize(): number | null {
    return this.keying.by === 'tokens' ? this.keying.blockSize : null;
  }

  /** Forget what the index says a removed worker holds. */
  forget(w: Worker): void {
    this.lookup.predicted?.forgetWorker(w);
    if (this.source === 'requests') return this.index.forgetWorker(w.slot);
    this.kvIndex.detach(w);
  }
}
