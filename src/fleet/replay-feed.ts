import { readFileSync } from 'node:fs';
import { UsageError, ErrorCodes } from '../errors/index.js';
import type { Store } from './fleet-feed.js';
import { mergeReplicas } from './merge.js';
import { RateWindow } from './rates.js';
import type { FleetView, ReplicaSnapshot, ReplicaStatus, SourceKind } from './view-model.js';

/** One recorded update (`top --record`). */
export interface RecordedUpdate {
  at: number;
  replica: string;
  source: SourceKind | null;
  live: boolean;
  error: string | null;
  snapshot: ReplicaSnapshot | null;
}

/** The longest wait between two updates in a replay: an idle stretch is not replayed in full. */
const MAX_GAP_MS = 2000;

/** Read a recording; lines that are not recorded updates are counted and named, not silently dropped. */
export function readRecording(path: string): { updates: RecordedUpdate[]; bad: number[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      ErrorCodes.USAGE,
      `cannot read the --replay file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const updates: RecordedUpdate[] = [];
  const bad: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      const o = JSON.parse(line) as Partial<RecordedUpdate>;
      if (typeof o.at !== 'number' || typeof o.replica !== 'string' || typeof o.live !== 'boolean') throw new Error('not an update');
      updates.push({
        at: o.at,
        replica: o.replica,
        source: o.source ?? null,
        live: o.live,
        error: o.error ?? null,
        snapshot: o.snapshot ?? null,
      });
    } catch {
      bad.push(i + 1);
    }
  });
  if (updates.length === 0) throw new UsageError(ErrorCodes.USAGE, `${path} holds no recorded updates (write one with top --record)`);
  updates.sort((a, b) => a.at - b.at);
  return { updates, bad };
}

/**
 * A recording played back as a fleet feed (`top --replay`): the updates are applied in
 * their recorded order and rhythm (gaps capped at 2 s, times `speed`), through the same
 * rate windows and merge as a live feed, so the console shows what it showed then.
 * Pausing stops the playback clock; `step` applies the next update while paused.
 */
export class ReplayFeed implements Store<FleetView | undefined> {
  readonly #updates: RecordedUpdate[];
  readonly #statuses = new Map<string, ReplicaStatus>();
  readonly #windows = new Map<string, RateWindow>();
  readonly #listeners = new Set<() => void>();
  #view: FleetView | undefined;
  #next = 0;
  #timer: NodeJS.Timeout | undefined;
  paused = false;
  speed = 1;

  constructor(updates: RecordedUpdate[]) {
    this.#updates = updates;
  }

  /** Where the playback is: the recorded time of the last update applied, and how far along. */
  get position(): { at: number | null; index: number; total: number } {
    return { at: this.#next > 0 ? this.#updates[this.#next - 1]!.at : null, index: this.#next, total: this.#updates.length };
  }

  get done(): boolean {
    return this.#next >= this.#updates.length;
  }

  get = (): FleetView | undefined => this.#view;

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  start(): void {
    this.step();
    this.#schedule();
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }

  togglePause(): void {
    this.paused = !this.paused;
    if (this.paused && this.#timer) clearTimeout(this.#timer);
    if (!this.paused) this.#schedule();
  }

  faster(): void {
    this.speed = Math.min(64, this.speed * 2);
  }

  slower(): void {
    this.speed = Math.max(1 / 8, this.speed / 2);
  }

  /** Apply the next update now. */
  step(): void {
    const u = this.#updates[this.#next];
    if (u === undefined) return;
    this.#next++;
    let window = this.#windows.get(u.replica);
    if (!window) this.#windows.set(u.replica, (window = new RateWindow()));
    const prev = this.#statuses.get(u.replica);
    // Times as of now, so ages on screen read as they did when recorded.
    const status: ReplicaStatus = {
      url: u.replica,
      source: u.source,
      live: u.live,
      error: u.error,
      snapshot: u.snapshot ?? prev?.snapshot ?? null,
      rates: u.live && u.snapshot ? window.push(u.snapshot) : null,
      receivedAt: u.live ? Date.now() : (prev?.receivedAt ?? null),
    };
    this.#statuses.set(u.replica, status);
    this.#view = mergeReplicas([...this.#statuses.values()]);
    for (const l of this.#listeners) l();
  }

  #schedule(): void {
    if (this.#timer) clearTimeout(this.#timer);
    if (this.paused || this.done) return;
    const gap = Math.min(MAX_GAP_MS, Math.max(0, this.#updates[this.#next]!.at - this.#updates[this.#next - 1]!.at));
    this.#timer = setTimeout(() => {
      this.step();
      this.#schedule();
    }, gap / this.speed);
    this.#timer.unref();
  }
}
