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
 * its counts on the bounds already sent), removals,
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
      // A worker's histograms keep their bounds: a changed one goes as its counts alone, a quarter of its whole size.
      written.push(latency ? `${json.slice(0, -1)},"latency_counts":${part.latency.counts}}` : json);
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
