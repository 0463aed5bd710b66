import type { AdminWorker } from '../../contract/index.js';
import type { AdminStateParts, LatencyJson, WorkerPart } from './admin-state.js';
import { workerJson } from './admin-state.js';
import type { FieldsJson } from './worker-fields-json.js';

/** What a stream last sent of one worker: its fields' JSON and its latency's. */
interface SentWorker {
  readonly json: FieldsJson;
  readonly latency: LatencyJson;
}

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
 */
export class StateDeltaEncoder {
  #workers = new Map<string, SentWorker>();
  #order: string[] = [];
  readonly #head = new Map<string, string>();
  #started = false;
  /** What was sent before this event, while it is written. */
  #previous = new Map<string, SentWorker>();

  #sentLatency(part: WorkerPart): LatencyJson | undefined {
    return this.#previous.get(part.fields.url)?.latency;
  }

  /** The next event: `state` (whole) first, then `state_delta`. */
  next(parts: AdminStateParts, whole: (parts: AdminStateParts) => Buffer): { event: 'state' | 'state_delta'; data: string | Buffer } {
    const first = !this.#started;
    this.#started = true;
    const set: string[] = [];
    for (const [key, value] of Object.entries(parts.head)) {
      const json = JSON.stringify(value);
      if (key === 'timestamp_ms' || this.#head.get(key) !== json) set.push(`${JSON.stringify(key)}:${json}`);
      this.#head.set(key, json);
    }
    const prev = this.#workers;
    const next = new Map<string, SentWorker>();
    const patches: Array<{ part: WorkerPart; patch: Record<string, unknown> | null; latency: boolean }> = [];
    const added: string[] = [];
    const order: string[] = [];
    let moved = 0;
    for (const part of parts.workers) {
      const url = part.fields.url;
      order.push(url);
      next.set(url, { json: part.json, latency: part.latency });
      if (first) continue;
      const was = prev.get(url);
      if (was === undefined) {
        added.push(url);
        patches.push({ part, patch: null, latency: true });
        continue;
      }
      const fieldsMoved = was.json !== part.json && was.json.text !== part.json.text;
      const latencyMoved = was.latency !== part.latency && was.latency.text !== part.latency.text;
      if (!fieldsMoved && !latencyMoved) continue;
      const patch = fieldsMoved ? changedFields(was, part) : { url };
      if ('sample_at_ms' in patch) moved++;
      patches.push({ part, patch, latency: latencyMoved });
    }
    this.#previous = prev;
    const removed = first ? [] : this.#order.filter((url) => !next.has(url));
    const assumed = this.#order.filter((url) => next.has(url)).concat(added);
    this.#workers = next;
    this.#order = order;
    if (first) return { event: 'state', data: whole(parts) };
    const reordered = assumed.length !== order.length || assumed.some((url, i) => url !== order[i]);
    // When a quarter of the fleet or more has a new sample (engines that push their load
    // do, every second), one column of sample times in document order is smaller than
    // as many patches naming their worker.
    const column = moved * 4 >= order.length && moved > 0;
    const written: string[] = [];
    for (const { part, patch, latency } of patches) {
      if (patch === null) {
        written.push(workerJson(part));
        continue;
      }
      if (column) delete patch.sample_at_ms;
      if (!latency && Object.keys(patch).length === 1) continue;
      const json = JSON.stringify(patch);
      if (!latency) {
        written.push(json);
        continue;
      }
      // What the histograms gained, a few buckets, rather than all of them again; whole if they did not only grow.
      const was = this.#sentLatency(part);
      const added = was === undefined ? null : latencyAdded(was.histograms, part.latency.histograms);
      written.push(`${json.slice(0, -1)},${added === null ? `"latency":${part.latency.text}` : `"latency_added":${added}`}}`);
    }
    const samples = column ? `,"sample_at_ms":${JSON.stringify(parts.workers.map((w) => w.fields.sample_at_ms))}` : '';
    const data =
      `{"set":{${set.join(',')}},"workers":[${written.join(',')}],"removed":${JSON.stringify(removed)}` +
      `${reordered ? `,"order":${JSON.stringify(order)}` : ''}${samples},"sample_clock_ms":${parts.sampleClockMs}}`;
    return { event: 'state_delta', data };
  }
}

/** A changed worker's URL and the fields that differ from what was sent, each whole. */
function changedFields(was: SentWorker, part: WorkerPart): Record<string, unknown> {
  const patch: Record<string, unknown> = { url: part.fields.url };
  // The sent JSON, parsed again: the live fields may share objects that moved since.
  const before = JSON.parse(was.json.text) as Record<string, unknown>;
  for (const [key, value] of Object.entries(part.fields)) {
    const old = before[key];
    const same = typeof value === 'object' && value !== null ? JSON.stringify(value) === JSON.stringify(old) : value === old;
    if (!same) patch[key] = value;
  }
  return patch;
}

/**
 * What a worker's histograms gained since they were sent, as `latency_added`
 * (docs/metrics-and-admin.md §Stream deltas): per histogram the buckets that took
 * observations, as [index, observations] with index counted over the bounds and the
 * +Inf bucket last, and the new sum; one that took none is left out. Null when they did not only grow on the same
 * bounds (then the delta carries them whole).
 */
function latencyAdded(was: AdminWorker['latency'], now: AdminWorker['latency']): string | null {
  const out: string[] = [];
  for (const name of ['ttft_seconds', 'duration_seconds'] as const) {
    const a = was[name];
    const b = now[name];
    if (a.buckets.length !== b.buckets.length) return null;
    const added: Array<[number, number]> = [];
    let belowA = 0;
    let belowB = 0;
    for (let i = 0; i <= b.buckets.length; i++) {
      if (i < b.buckets.length && a.buckets[i]!.le !== b.buckets[i]!.le) return null;
      const upToA = i < a.buckets.length ? a.buckets[i]!.count : a.count;
      const upToB = i < b.buckets.length ? b.buckets[i]!.count : b.count;
      const gained = upToB - belowB - (upToA - belowA);
      if (gained < 0) return null;
      if (gained > 0) added.push([i, gained]);
      belowA = upToA;
      belowB = upToB;
    }
    // A histogram that took nothing (TTFT, for a request that did not stream) is left out.
    if (added.length > 0) out.push(`"${name}":{"added":${JSON.stringify(added)},"sum":${JSON.stringify(b.sum)}}`);
  }
  return `{${out.join(',')}}`;
}
