import { decodeLoadStat, PushDecodeError, pushEndpoint, SequenceTracker, ZmtpSubscription } from '../../../engines/index.js';
import type { PushInfo, RankReading } from '../../../engines/index.js';
import type { Worker } from '../../upstream/worker.js';
import type { LoadTable } from './load-table.js';

/**
 * A rank whose last LoadStat is older than this is no longer pushing: the engine
 * re-sends an unchanged reading every second, so three missed heartbeats mean the
 * channel is down, and polling takes over for the worker until frames come back.
 */
export const PUSH_SILENT_AFTER_MS = 3000;

/** What the admin state shows about a worker's load push. */
export interface LoadPushStats {
  readonly endpoints: readonly string[];
  readonly frames: number;
  readonly decodeErrors: number;
  /** LoadStat frames missed (sequence gaps); the engine keeps no replay of load. */
  readonly missed: number;
  readonly resets: number;
  readonly lastError: string | undefined;
}

interface RankState {
  reading: RankReading | undefined;
  /**
   * The payload `reading` was decoded from: an idle engine re-sends the same bytes
   * every second, and the subscription hands an unchanged payload on as the same
   * buffer, so a heartbeat is told by identity.
   */
  payload: Uint8Array | undefined;
  at: number;
  readonly tracker: SequenceTracker;
}

interface WorkerPush extends LoadPushStats {
  readonly worker: Worker;
  readonly subscriptions: ZmtpSubscription[];
  readonly ranks: RankState[];
  /**
   * What the table was last given: replaced (never changed in place) when a rank's
   * reading changes, and given again as it is for a heartbeat, which only moves the
   * sample's time.
   */
  readings: ReadonlyArray<readonly [number, RankReading]>;
  /** The oldest rank's last frame; -Infinity until every rank has spoken. The worker is live while it is recent. */
  oldest: number;
  frames: number;
  decodeErrors: number;
  missed: number;
  resets: number;
  lastError: string | undefined;
  /** Set when the worker is detached: a frame already on its way is then dropped (checked per frame without a map lookup). */
  detached: boolean;
}

/**
 * SGLang's `LoadStat` push (docs/engine-load.md §Load by push): one SUB socket per DP
 * rank, each frame stamped on arrival with the router's clock, exactly as a poll
 * sample is. The table gets every rank at once, dated by the oldest rank's frame, so
 * a worker is fresh only while every rank is (the freshness window is unchanged).
 * While every rank pushes, the sampler does not poll the worker's load; a channel
 * that goes quiet hands the worker back to polling.
 */
export class LoadPush {
  readonly #table: LoadTable;
  readonly #now: () => number;
  /**
   * By the worker's slot: the sampler asks whether each worker it comes to is live, and
   * the event watcher asks it of the whole fleet twice a second, so this is an index,
   * not a hash lookup.
   */
  readonly #bySlot: Array<WorkerPush | undefined> = [];

  constructor(table: LoadTable, now: () => number) {
    this.#table = table;
    this.#now = now;
  }

  /** Subscribe to a worker's load channel, if its engine advertises one; replaces an earlier subscription. */
  attach(worker: Worker, info: PushInfo | null): void {
    this.detach(worker);
    if (info === null || info.loadPortBase === null) return;
    const ranks: RankState[] = [];
    const subscriptions: ZmtpSubscription[] = [];
    const endpoints: string[] = [];
    const state: WorkerPush = {
      worker,
      readings: [],
      oldest: -Infinity,
      endpoints,
      subscriptions,
      ranks,
      frames: 0,
      decodeErrors: 0,
      missed: 0,
      resets: 0,
      lastError: undefined,
      detached: false,
    };
    for (let r = 0; r < info.dpSize; r++) {
      const endpoint = pushEndpoint(worker.url, info, info.loadPortBase, r);
      endpoints.push(endpoint);
      ranks.push({ reading: undefined, payload: undefined, at: -Infinity, tracker: new SequenceTracker() });
      subscriptions.push(
        new ZmtpSubscription(
          endpoint,
          info.loadTopic,
          (payload, seq) => this.#onFrame(worker, state, r, payload, seq),
          (err) => this.#error(state, err),
        ),
      );
    }
    this.#bySlot[worker.slot] = state;
  }

  detach(worker: Worker): void {
    const s = this.#state(worker);
    if (!s) return;
    s.detached = true;
    for (const sub of s.subscriptions) sub.close();
    this.#bySlot[worker.slot] = undefined;
  }

  close(): void {
    for (const s of this.#bySlot) if (s) this.detach(s.worker);
  }

  /** Every rank of the worker pushed within PUSH_SILENT_AFTER_MS: its load needs no poll. */
  isLive(worker: Worker, now = this.#now()): boolean {
    const s = this.#state(worker);
    return s !== undefined && now - s.oldest <= PUSH_SILENT_AFTER_MS;
  }

  /** Whether the worker's engine advertises a load channel the router subscribed to. */
  has(worker: Worker): boolean {
    return this.#state(worker) !== undefined;
  }

  stats(worker: Worker): LoadPushStats | undefined {
    return this.#state(worker);
  }

  /** A slot is another worker's once this one is gone: the state is the worker's only if it says so. */
  #state(worker: Worker): WorkerPush | undefined {
    const s = this.#bySlot[worker.slot];
    return s?.worker === worker ? s : undefined;
  }

  #onFrame(worker: Worker, s: WorkerPush, rank: number, payload: Uint8Array, seq: number): void {
    if (s.detached) return;
    const r = s.ranks[rank]!;
    let reading = r.reading;
    // The same bytes decode to the same reading: a heartbeat needs no second decode.
    if (reading === undefined || (payload !== r.payload && !sameBytes(payload, r.payload))) {
      try {
        reading = decodeLoadStat(payload).reading;
      } catch (err) {
        if (!(err instanceof PushDecodeError)) throw err;
        this.#error(s, err);
        return;
      }
    }
    s.frames++;
    const verdict = r.tracker.observe(seq);
    if (verdict.kind === 'duplicate') return;
    if (verdict.kind === 'gap') s.missed += verdict.to - verdict.from + 1;
    if (verdict.kind === 'reset') s.resets++;
    const now = this.#now();
    const changed = reading !== r.reading;
    r.reading = reading;
    r.payload = payload;
    r.at = now;
    let oldest = now;
    for (const x of s.ranks) {
      if (x.reading === undefined) return; // not every rank has spoken yet
      if (x.at < oldest) oldest = x.at;
    }
    s.oldest = oldest;
    if (changed || s.readings.length !== s.ranks.length) s.readings = s.ranks.map((x, i) => [i, x.reading!] as const);
    this.#table.apply(worker, s.readings, oldest);
  }

  #error(s: WorkerPush, err: PushDecodeError): void {
    s.decodeErrors++;
    s.lastError = err.message;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array | undefined): boolean {
  return b !== undefined && a.length === b.length && Buffer.compare(a, b) === 0;
}
