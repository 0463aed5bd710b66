import type { AdminStateParts, LatencyJson, WorkerPart } from './admin-state.js';
import { workerBytes, workerJson } from './admin-state.js';
import { WORKER_FIELD_ROWS } from '../../contract/index.js';
import type { WorkerFields } from '../../contract/index.js';
import type { FieldsJson } from './worker-fields-json.js';

/** What a stream last sent of one worker: its fields' JSON (which holds the fields it was written from) and its latency's. */
interface SentWorker {
  readonly json: FieldsJson;
  readonly latency: LatencyJson;
}

/** A worker whose entry moved since it was last sent, and where it stands in the document. */
interface Moved {
  readonly part: WorkerPart;
  readonly was: SentWorker;
  readonly index: number;
  readonly fields: boolean;
  readonly latency: boolean;
}

/**
 * The most an event of a stream carries (docs/metrics-and-admin.md §Stream deltas).
 * Under traffic spread over 4,096 workers some 3,500 of them change every second, a
 * delta of 440 KB; a console that reads it every second at 3 a.m. does not need every
 * counter of every worker at once, so what does not fit waits for the next event.
 */
export const STREAM_EVENT_BYTES = 192 * 1024;
/** An event as a stream sends it. */
export interface StreamEvent {
  readonly event: 'state' | 'state_delta';
  readonly data: string | Buffer;
}

/** Workers compared, or patches written, between two turns of the event loop in nextInSlices. */
const SLICE_WORKERS = 256;

/** Room a catching-up event keeps for all but its head and joined workers: the removed, the clock, `deferred`. */
const CATCH_UP_FRAME_BYTES = 1024;

/** Changed workers an event carries whatever its other parts took, so that none waits for ever. */
const LEAST_PATCHES = 64;

/**
 * One /admin/stream connection's deltas (docs/metrics-and-admin.md §Stream deltas):
 * the first event is the whole document, each later one only what changed since the
 * previous event — top-level fields whole, workers as their changed fields (latency as
 * what its histograms gained), removals,
 * the order when it is not the one the client would assume, and the sample times as
 * one column when many moved. A worker's
 * `sample_age_ms` moves every event; its `sample_at_ms` moves only with a new sample,
 * so the delta carries that and the clock, and an idle fleet of thousands sends a few
 * kilobytes instead of the whole document.
 *
 * An event holds at most `budget` bytes. When more workers changed than fit, a
 * change of state (health, breaker, gate, freshness, load source) goes first, then the
 * rest in turn from where the previous event stopped; a worker left out keeps what was
 * last sent of it, so the next event carries all it gained meanwhile, and the delta
 * says how many wait (`deferred`).
 *
 * A document larger than the budget is not sent whole either: the first event holds
 * the head and the workers that fit, and the events after it (`catchingUp`: the stream
 * sends them at once) bring the rest in document order as joined workers, with
 * `deferred` counting those still to come; so do workers that join more than fit.
 */
export class StateDeltaEncoder {
  #workers = new Map<string, SentWorker>();
  #order: string[] = [];
  readonly #head = new Map<string, string>();
  #started = false;
  /** Where in the document the next event's turn begins. */
  #cursor = 0;
  /** Workers in the document the client has not been sent yet: a first event, or joins, past the budget. */
  #unsent = 0;
  readonly #budget: number;

  constructor(budget = STREAM_EVENT_BYTES) {
    this.#budget = budget;
  }

  /** The last event left workers of the document unsent: the next one should follow at once, not at the next tick. */
  get catchingUp(): boolean {
    return this.#unsent > 0;
  }

  /** The next event: `state` (whole) first, then `state_delta`. */
  next(parts: AdminStateParts, whole: (parts: AdminStateParts) => Buffer): StreamEvent {
    const steps = this.#encode(parts, whole);
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
    }
  }

  /**
   * The same event, with the event loop let go every SLICE_WORKERS workers compared
   * and patches written, as a stream reads the fleet (docs/metrics-and-admin.md
   * §Building the document at scale). One event at a time per encoder.
   */
  async nextInSlices(parts: AdminStateParts, whole: (parts: AdminStateParts) => Buffer): Promise<StreamEvent> {
    const steps = this.#encode(parts, whole);
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** The event, yielding where a slice of the work ends. */
  *#encode(parts: AdminStateParts, whole: (parts: AdminStateParts) => Buffer): Generator<void, StreamEvent> {
    const first = !this.#started;
    this.#started = true;
    const set: string[] = [];
    for (const [key, value] of Object.entries(parts.head)) {
      const json = JSON.stringify(value);
      if (key === 'timestamp_ms' || this.#head.get(key) !== json) set.push(`${JSON.stringify(key)}:${json}`);
      this.#head.set(key, json);
    }
    if (first) return yield* this.#first(parts, whole);
    // The document is still going out (catching up): this event brings more of its workers, nothing else of theirs.
    const catching = this.#unsent > 0;
    const prev = this.#workers;
    const next = new Map<string, SentWorker>();
    const urgent: Moved[] = [];
    const routine: Moved[] = [];
    const order: string[] = [];
    let moved = 0;
    // Joins take at most half an ordinary event, all of one but its frame while catching up; the rest come in the events that follow at once.
    const joins = new Joins(catching ? this.#budget - Buffer.byteLength(set.join(',')) - CATCH_UP_FRAME_BYTES : this.#budget / 2);
    for (let index = 0; index < parts.workers.length; index++) {
      if (index % SLICE_WORKERS === SLICE_WORKERS - 1) yield;
      const part = parts.workers[index]!;
      const url = part.fields.url;
      const was = prev.get(url);
      if (was === undefined) {
        if (joins.take(part)) {
          order.push(url);
          next.set(url, { json: part.json, latency: part.latency });
        }
        continue;
      }
      order.push(url);
      // What changed on a worker already sent waits for the first ordinary delta, a tick later.
      if (catching) {
        next.set(url, was);
        continue;
      }
      // By identity and counts, not by text: the JSON is written only for what is sent.
      const fields = was.json !== part.json;
      const latency =
        was.latency !== part.latency &&
        (was.latency.ttftCount !== part.latency.ttftCount || was.latency.durationCount !== part.latency.durationCount);
      // Until it is sent, a worker's histograms stay the ones the reader has.
      next.set(url, { json: part.json, latency: latency ? part.latency : was.latency });
      if (!fields && !latency) continue;
      if (was.json.fields.sample_at_ms !== part.fields.sample_at_ms) moved++;
      (fields && stateMoved(was.json.fields, part.fields) ? urgent : routine).push({ part, was, index, fields, latency });
    }
    const { urls: added, written, unsent } = joins;
    const removed = this.#order.filter((url) => !next.has(url));
    const assumed = this.#order.filter((url) => next.has(url)).concat(added);
    this.#order = order;
    this.#unsent = unsent;
    const reordered = assumed.length !== order.length || assumed.some((url, i) => url !== order[i]);
    // When a quarter of the fleet or more has a new sample (engines that push their load
    // do, every second), one column of sample times in document order is smaller than
    // as many patches naming their worker.
    const column = moved * 4 >= order.length && moved > 0;
    const samples = column ? `,"sample_at_ms":${JSON.stringify(sentSamples(parts, next))}` : '';
    const tail =
      `],"removed":${JSON.stringify(removed)}${reordered ? `,"order":${JSON.stringify(order)}` : ''}${samples}` +
      `,"sample_clock_ms":${parts.sampleClockMs}`;
    // What the event holds besides the changed workers, and room for `deferred`; in bytes, as it is sent.
    let room = this.#budget - Buffer.byteLength(set.join(',')) - Buffer.byteLength(tail) - 48;
    for (const w of written) room -= Buffer.byteLength(w) + 1;
    let sent = 0;
    let deferred = 0;
    let resume = -1;
    let full = false;
    let patched = 0;
    for (const m of [...inTurn(urgent, this.#cursor), ...inTurn(routine, this.#cursor)]) {
      if (!full && ++patched % SLICE_WORKERS === 0) yield;
      const json = full ? undefined : patchJson(m, column);
      if (json === null) continue;
      const size = json === undefined ? 0 : Buffer.byteLength(json) + 1;
      if (json === undefined || (size > room && sent >= LEAST_PATCHES)) {
        // Left out, and all after it: each keeps what was sent, and its turn says all it gained since.
        full = true;
        next.set(m.part.fields.url, m.was);
        deferred++;
        continue;
      }
      written.push(json);
      room -= size;
      sent++;
      resume = m.index + 1;
    }
    if (deferred > 0 && resume >= 0) this.#cursor = resume % order.length;
    this.#workers = next;
    const waiting = deferred + unsent;
    const data = `{"set":{${set.join(',')}},"workers":[${written.join(',')}${tail}${waiting > 0 ? `,"deferred":${waiting}` : ''}}`;
    return { event: 'state_delta', data };
  }

  /** The first event: the whole document, or its head and the workers that fit, in order. */
  *#first(parts: AdminStateParts, whole: (parts: AdminStateParts) => Buffer): Generator<void, StreamEvent> {
    const all = parts.workers;
    let room = this.#budget - whole({ ...parts, workers: [] }).length;
    let fit = 0;
    for (; fit < all.length; fit++) {
      if (fit % SLICE_WORKERS === SLICE_WORKERS - 1) yield;
      const size = workerBytes(all[fit]!);
      if (size > room && fit > 0) break;
      room -= size;
    }
    const sent = fit === all.length ? all : all.slice(0, fit);
    for (const part of sent) this.#workers.set(part.fields.url, { json: part.json, latency: part.latency });
    this.#order = sent.map((w) => w.fields.url);
    this.#unsent = all.length - fit;
    return { event: 'state', data: whole(sent === all ? parts : { ...parts, workers: sent }) };
  }
}

/**
 * Workers new to a stream's client, written whole while they fit in `room` bytes; the
 * first that does not, and every one after it, wait for the events that follow
 * (`unsent`), so they arrive in document order.
 */
class Joins {
  readonly urls: string[] = [];
  readonly written: string[] = [];
  unsent = 0;
  #room: number;

  constructor(room: number) {
    this.#room = room;
  }

  /** Whether `part` is in this event. */
  take(part: WorkerPart): boolean {
    if (this.unsent > 0) {
      this.unsent++;
      return false;
    }
    const json = workerJson(part);
    const size = Buffer.byteLength(json) + 1;
    if (size > this.#room && this.urls.length > 0) {
      this.unsent++;
      return false;
    }
    this.#room -= size;
    this.urls.push(part.fields.url);
    this.written.push(json);
    return true;
  }
}

/** The sample times of the workers the client has, in document order. */
function sentSamples(parts: AdminStateParts, sent: ReadonlyMap<string, SentWorker>): Array<number | null> {
  const out: Array<number | null> = [];
  for (const w of parts.workers) if (sent.has(w.fields.url)) out.push(w.fields.sample_at_ms);
  return out;
}

/** The fields whose change is one of what a worker is (WORKER_FIELDS' `state`). */
const STATE_KEYS = WORKER_FIELD_ROWS.filter(([, row]) => row.state).map(([key]) => key as keyof WorkerFields);
/** The fields a patch may carry, and how each compares. */
const PATCH_ROWS = WORKER_FIELD_ROWS.filter(([, row]) => row.compare !== 'apart') as ReadonlyArray<
  readonly [keyof WorkerFields, (typeof WORKER_FIELD_ROWS)[number][1]]
>;

/** A change of what a worker is, rather than of how much it did: what an operator must see at once. */
function stateMoved(was: WorkerFields, now: WorkerFields): boolean {
  for (const key of STATE_KEYS) if (was[key] !== now[key]) return true;
  return false;
}

/** The moved workers from document index `from` on, then those before it. */
function inTurn(moved: readonly Moved[], from: number): Moved[] {
  const at = moved.findIndex((m) => m.index >= from);
  return at <= 0 ? [...moved] : [...moved.slice(at), ...moved.slice(0, at)];
}

/** A moved worker's patch as JSON; null when nothing is left to say (its new sample went in the column). */
function patchJson(m: Moved, column: boolean): string | null {
  const patch = m.fields ? changedFields(m.was, m.part) : { url: m.part.fields.url };
  if (column) delete patch.sample_at_ms;
  if (!m.latency && Object.keys(patch).length === 1) return null;
  const json = JSON.stringify(patch);
  if (!m.latency) return json;
  // What the histograms gained, a few buckets, rather than all of them again; whole if they did not only grow.
  const added = latencyAdded(m.was.latency.readings, m.part.latency.readings);
  return `${json.slice(0, -1)},${added === null ? `"latency":${m.part.latency.text}` : `"latency_added":${added}`}}`;
}

/**
 * A changed worker's URL and the fields that differ from what was sent, each whole.
 * Both readings are snapshots (the router's workerFields copies what it reads), so
 * what was sent can be compared as it stands.
 */
function changedFields(was: SentWorker, part: WorkerPart): Partial<WorkerFields> & { url: string } {
  const patch: Record<string, unknown> = { url: part.fields.url };
  const before = was.json.fields;
  for (const [key, row] of PATCH_ROWS) {
    const value = part.fields[key];
    const old = before[key];
    const same = row.compare === 'value' ? value === old : value === old || JSON.stringify(value) === JSON.stringify(old);
    if (!same) patch[key] = value;
  }
  return patch as Partial<WorkerFields> & { url: string };
}

/**
 * What a worker's histograms gained since they were sent, as `latency_added`
 * (docs/metrics-and-admin.md §Stream deltas): per histogram the buckets that took
 * observations, as [index, observations] with index counted over the bounds and the
 * +Inf bucket last, and the new sum; one that took none is left out. Null when they did not only grow on the same
 * bounds (then the delta carries them whole).
 */
function latencyAdded(was: LatencyJson['readings'], now: LatencyJson['readings']): string | null {
  const out: string[] = [];
  for (const name of ['ttft_seconds', 'duration_seconds'] as const) {
    const a = was[name];
    const b = now[name];
    // Per-bucket counts as read, compared in place: building {le, count} objects for
    // every bucket of every worker that took a request was most of an event's garbage.
    if (a.bounds !== b.bounds && !sameBounds(a.bounds, b.bounds)) return null;
    const added: Array<[number, number]> = [];
    for (let i = 0; i < b.counts.length; i++) {
      const gained = b.counts[i]! - a.counts[i]!;
      if (gained < 0) return null;
      if (gained > 0) added.push([i, gained]);
    }
    // A histogram that took nothing (TTFT, for a request that did not stream) is left out.
    if (added.length > 0) out.push(`"${name}":{"added":${JSON.stringify(added)},"sum":${JSON.stringify(b.sum)}}`);
  }
  return `{${out.join(',')}}`;
}

function sameBounds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((le, i) => le === b[i]);
}
