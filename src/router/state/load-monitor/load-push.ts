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
  /** The payload `reading` was decoded from: an idle engine re-sends the same bytes every second. */
  payload: Uint8Array | undefined;
  at: number;
  readonly tracker: SequenceTracker;
}

interface WorkerPush extends LoadPushStats {
  readonly subscriptions: ZmtpSubscription[];
  readonly ranks: RankState[];
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
  readonly #workers = new Map<Worker, WorkerPush>();

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
          (frame) => this.#onFrame(worker, state, r, frame.payload, frame.seq),
          (err) => this.#error(state, err),
        ),
      );
    }
    this.#workers.set(worker, state);
  }

  detach(worker: Worker): void {
    const s = this.#workers.get(worker);
    if (!s) return;
    s.detached = true;
    for (const sub of s.subscriptions) sub.close();
    this.#workers.delete(worker);
  }

  close(): void {
    for (const w of [...this.#workers.keys()]) this.detach(w);
  }

  /** Every rank of the worker pushed within PUSH_SILENT_AFTER_MS: its load needs no poll. */
  isLive(worker: Worker, now = this.#now()): boolean {
    const s = this.#workers.get(worker);
    if (!s) return false;
    for (const r of s.ranks) if (r.reading === undefined || now - r.at > PUSH_SILENT_AFTER_MS) return false;
    return true;
  }

  /** Whether the worker's engine advertises a load channel the router subscribed to. */
  has(worker: Worker): boolean {
    return this.#workers.has(worker);
  }

  stats(worker: Worker): LoadPushStats | undefined {
    return this.#workers.get(worker);
  }

  #onFrame(worker: Worker, s: WorkerPush, rank: number, payload: Uint8Array, seq: number): void {
    if (s.detached) return;
    const r = s.ranks[rank]!;
    let reading: RankReading;
    // The same bytes decode to the same reading: a heartbeat needs no second decode.
    if (r.reading !== undefined && r.payload !== undefined && sameBytes(payload, r.payload)) reading = r.reading;
    else {
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
    r.reading = reading;
    r.payload = payload;
    r.at = now;
    let oldest = now;
    for (const x of s.ranks) {
      if (x.reading === undefined) return; // not every rank has spoken yet
      if (x.at < oldest) oldest = x.at;
    }
    this.#table.apply(
      worker,
      s.ranks.map((x, i) => [i, x.reading!] as const),
      oldest,
    );
  }

  #error(s: WorkerPush, err: PushDecodeError): void {
    s.decodeErrors++;
    s.lastError = err.message;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
