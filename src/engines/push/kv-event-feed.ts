import { decodeKvEventBatch, PushDecodeError } from './kv-events.js';
import type { EngineKind, KvEventBatch } from './kv-events.js';
import type { PushFrame } from './push-frame.js';
import { PushSubscription } from './push-subscription.js';
import { replayFrom } from './replay.js';
import { SequenceTracker } from './sequence-tracker.js';

/** Where a feed's batches go, in sequence order. */
export interface KvFeedSink {
  batch(batch: KvEventBatch, seq: number): void;
  /** The publisher started over (an engine restart): everything it said before is void. */
  reset(): void;
}

export interface KvEventFeedOptions {
  endpoint: string;
  /** Bind `endpoint` for the engine to connect to (llm-d-inference-sim), instead of connecting to it. */
  bind?: boolean;
  topic: string;
  engine: EngineKind;
  /** Keep each BlockStored's token ids (the sink keys blocks by their tokens). */
  tokens?: boolean;
  /** The publisher's replay socket, when it has one: gaps are repaired from it. */
  replayEndpoint?: string;
  replayTimeoutMs?: number;
}

/**
 * How a feed caught up with what its engine published before it subscribed
 * (docs/engine-push.md §Catching up):
 * - `pending`: the replay is under way;
 * - `complete`: the replay socket still held every batch from sequence 0;
 * - `partial`: it no longer did (its buffer rolled over): the blocks stored in the
 *   batches before its oldest are missing until the engine stores them again;
 * - `failed`: the replay socket did not answer in time;
 * - `none`: the engine has no replay socket the router knows of: a feed that
 *   subscribes after the engine published anything begins empty.
 */
export type KvCatchUp = 'pending' | 'complete' | 'partial' | 'failed' | 'none';

/** What a feed has seen, for the admin state and /metrics. */
export interface KvFeedStats {
  batches: number;
  events: number;
  skippedEvents: number;
  decodeErrors: number;
  gaps: number;
  /** Gaps whose every batch the replay gave back, and gaps with a batch lost. */
  gapsRepaired: number;
  gapsLost: number;
  /** Batches a gap missed, whether repaired or not. */
  missed: number;
  repaired: number;
  /** Missed batches the replay could not give back (no replay socket, or beyond its buffer). */
  lost: number;
  resets: number;
  /** Batches the replay socket gave back when the feed started (what the engine published before the router listened). */
  replayedAtStart: number;
  catchUp: KvCatchUp;
  /** Batches the engine published before the feed subscribed that it never got (before the replay's oldest, or, without replay, before the first live batch). */
  catchUpMissed: number;
  lastSeq: number;
  /** The engine's timestamp of the last batch applied (seconds since the epoch); undefined before the first. */
  lastBatchTs: number | undefined;
  lastError: string | undefined;
}

/**
 * One publisher's KV events (a worker's one DP rank), applied in sequence order
 * (docs/engine-push.md §Sequence and replay). A gap holds the live stream while the
 * replay socket is asked for the missed batches; they are applied, then what arrived
 * meanwhile. Without a replay socket, or beyond its buffer, the loss is counted and
 * the stream goes on: the index then drifts until evictions and new stores correct it,
 * which the counters make visible. A sequence back at 0 is a restarted publisher: the
 * sink forgets that rank before applying.
 */
export class KvEventFeed {
  readonly stats: KvFeedStats = {
    batches: 0,
    events: 0,
    skippedEvents: 0,
    decodeErrors: 0,
    gaps: 0,
    gapsRepaired: 0,
    gapsLost: 0,
    missed: 0,
    repaired: 0,
    lost: 0,
    resets: 0,
    replayedAtStart: 0,
    catchUp: 'none',
    catchUpMissed: 0,
    lastSeq: -1,
    lastBatchTs: undefined,
    lastError: undefined,
  };
  readonly #opts: KvEventFeedOptions;
  readonly #sink: KvFeedSink;
  readonly #tracker = new SequenceTracker();
  readonly #subscription: PushSubscription;
  /** Live frames held while a replay is under way; null when none is. */
  #held: PushFrame[] | null = null;
  #closed = false;

  constructor(opts: KvEventFeedOptions, sink: KvFeedSink) {
    this.#opts = opts;
    this.#sink = sink;
    this.#subscription = new PushSubscription(
      opts.endpoint,
      opts.topic,
      (f) => this.#onFrame(f),
      (err) => this.#decodeError(err),
      opts.bind === true ? { bind: true, onBindError: (message) => (this.stats.lastError = message) } : {},
    );
    // Joining late (a router restarted, or started after the engines) misses what the
    // engine already holds, and a SUB misses what is sent while it connects: with a
    // replay socket, start from what it still keeps, and hold the live stream meanwhile.
    if (opts.replayEndpoint !== undefined) {
      this.#held = [];
      this.stats.catchUp = 'pending';
      void this.#catchUp();
    }
  }

  async #catchUp(): Promise<void> {
    let last = -1;
    try {
      const { batches, complete } = await replayFrom(this.#opts.replayEndpoint!, 0, this.#opts.replayTimeoutMs ?? 2000);
      for (const b of batches) {
        if (b.seq <= last) continue;
        this.#apply(b.payload, b.seq);
        last = b.seq;
      }
      this.stats.replayedAtStart = batches.length;
      // A buffer that no longer starts at 0 rolled over: what it dropped is not to be had.
      const first = batches[0]?.seq ?? 0;
      this.stats.catchUpMissed = first;
      this.stats.catchUp = !complete ? 'failed' : first > 0 ? 'partial' : 'complete';
      if (!complete)
        this.stats.lastError = `replay at start: no end marker from ${this.#opts.replayEndpoint} within ${this.#opts.replayTimeoutMs ?? 2000} ms`;
    } catch (err) {
      this.stats.catchUp = 'failed';
      this.stats.lastError = `replay at start: ${(err as Error).message}`;
    }
    if (this.#closed) return;
    this.#tracker.last = last;
    const held = this.#held ?? [];
    this.#held = null;
    // Live batches the replay already gave are dropped here, so that the tracker reads
    // any step back in the live stream as a restart.
    for (const f of held) if (f.seq > last) this.#onFrame(f);
  }

  close(): void {
    this.#closed = true;
    this.#subscription.close();
  }

  #onFrame(frame: PushFrame): void {
    if (this.#closed) return;
    if (this.#held !== null) {
      this.#held.push(frame);
      return;
    }
    // Without replay, a first batch past 0 means the engine published before the feed listened.
    if (this.stats.catchUp === 'none' && this.#tracker.last < 0 && this.stats.resets === 0) this.stats.catchUpMissed = frame.seq;
    const verdict = this.#tracker.observe(frame.seq);
    switch (verdict.kind) {
      case 'duplicate':
        return;
      case 'reset':
        this.stats.resets++;
        this.#sink.reset();
        break;
      case 'gap':
        this.stats.gaps++;
        this.stats.missed += verdict.to - verdict.from + 1;
        if (this.#opts.replayEndpoint !== undefined) {
          this.#held = [frame];
          void this.#repair(verdict.from, verdict.to);
          return;
        }
        this.stats.lost += verdict.to - verdict.from + 1;
        this.stats.gapsLost++;
        break;
      case 'in_order':
        break;
    }
    this.#apply(frame.payload, frame.seq);
  }

  async #repair(from: number, to: number): Promise<void> {
    let got = 0;
    try {
      const { batches } = await replayFrom(this.#opts.replayEndpoint!, from, this.#opts.replayTimeoutMs ?? 2000);
      for (const b of batches) {
        if (b.seq < from || b.seq > to) continue;
        this.#apply(b.payload, b.seq);
        got++;
      }
    } catch (err) {
      this.stats.lastError = `replay from ${from}: ${(err as Error).message}`;
    }
    this.stats.repaired += got;
    this.stats.lost += to - from + 1 - got;
    if (got === to - from + 1) this.stats.gapsRepaired++;
    else this.stats.gapsLost++;
    // The held live frames, in arrival order, through the same checks as any frame.
    const held = this.#held ?? [];
    this.#held = null;
    const first = held.shift();
    if (first) this.#apply(first.payload, first.seq);
    for (const f of held) this.#onFrame(f);
  }

  #apply(payload: Uint8Array, seq: number): void {
    let batch: KvEventBatch;
    try {
      batch = decodeKvEventBatch(payload, this.#opts.engine, { tokens: this.#opts.tokens === true });
    } catch (err) {
      if (!(err instanceof PushDecodeError)) throw err;
      this.#decodeError(err);
      return;
    }
    this.stats.batches++;
    this.stats.events += batch.events.length;
    this.stats.skippedEvents += batch.skipped.length;
    this.stats.lastSeq = seq;
    this.stats.lastBatchTs = batch.ts;
    this.#sink.batch(batch, seq);
  }

  #decodeError(err: PushDecodeError): void {
    this.stats.decodeErrors++;
    this.stats.lastError = err.message;
  }
}
