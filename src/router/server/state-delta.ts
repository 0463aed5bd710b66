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
 * previous event — top-level fields whole, workers as their changed fields, removals,
 * and the order when it is not the one the client would assume. A worker's
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
    const patches: string[] = [];
    const added: string[] = [];
    const order: string[] = [];
    for (const part of parts.workers) {
      const url = part.fields.url;
      order.push(url);
      next.set(url, { json: part.json, latency: part.latency });
      if (first) continue;
      const was = prev.get(url);
      if (was === undefined) {
        added.push(url);
        patches.push(workerJson(part));
      } else if (
        (was.json !== part.json && was.json.text !== part.json.text) ||
        (was.latency !== part.latency && was.latency.text !== part.latency.text)
      ) {
        patches.push(patchJson(was, part));
      }
    }
    const removed = first ? [] : this.#order.filter((url) => !next.has(url));
    const assumed = this.#order.filter((url) => next.has(url)).concat(added);
    this.#workers = next;
    this.#order = order;
    if (first) return { event: 'state', data: whole(parts) };
    const reordered = assumed.length !== order.length || assumed.some((url, i) => url !== order[i]);
    const data =
      `{"set":{${set.join(',')}},"workers":[${patches.join(',')}],"removed":${JSON.stringify(removed)}` +
      `${reordered ? `,"order":${JSON.stringify(order)}` : ''},"sample_clock_ms":${parts.sampleClockMs}}`;
    return { event: 'state_delta', data };
  }
}

/** A changed worker as its URL and the fields that differ from what was sent, each whole. */
function patchJson(was: SentWorker, part: WorkerPart): string {
  const patch: Record<string, unknown> = { url: part.fields.url };
  if (was.json.text !== part.json.text) {
    // The sent JSON, parsed again: the live fields may share objects that moved since.
    const before = JSON.parse(was.json.text) as Record<string, unknown>;
    for (const [key, value] of Object.entries(part.fields)) {
      const old = before[key];
      const same = typeof value === 'object' && value !== null ? JSON.stringify(value) === JSON.stringify(old) : value === old;
      if (!same) patch[key] = value;
    }
  }
  const json = JSON.stringify(patch);
  return was.latency.text === part.latency.text ? json : `${json.slice(0, -1)},"latency":${part.latency.text}}`;
}
