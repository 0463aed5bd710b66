import type { AdminStateDelta } from '../contract/index.js';

type Json = Record<string, unknown>;

/**
 * The state document of one `/admin/stream?delta=1` connection
 * (docs/metrics-and-admin.md §Stream deltas): the first event is whole, each
 * `state_delta` after it is applied to it in turn. Each worker's `sample_age_ms` is
 * worked out from its `sample_at_ms` and the delta's clock, as the router would have
 * written it. The document is one object, changed in place: read it before the next
 * event.
 */
export class StateAssembler {
  #doc: Json | undefined;
  #workers = new Map<string, Json>();
  /** Changed workers the last event had no room for: their counters are an event or a few behind (`deferred`). */
  behind = 0;

  /** A whole document (an `event: state`); undefined when it is not one. */
  whole(raw: unknown): Json | undefined {
    if (!isObject(raw) || !Array.isArray(raw.workers)) return undefined;
    this.#doc = raw;
    this.behind = 0;
    this.#workers = new Map();
    for (const w of raw.workers) if (isObject(w) && typeof w.url === 'string') this.#workers.set(w.url, w);
    return raw;
  }

  /** The document after a delta; undefined before a whole one, or when the delta is malformed. */
  delta(raw: unknown): Json | undefined {
    const doc = this.#doc;
    if (doc === undefined || !isObject(raw) || !isObject(raw.set) || !Array.isArray(raw.workers)) return undefined;
    const d = raw as Partial<Record<keyof AdminStateDelta, unknown>> & { set: Json; workers: unknown[] };
    this.behind = typeof d.deferred === 'number' && d.deferred > 0 ? d.deferred : 0;
    for (const [key, value] of Object.entries(d.set)) if (key !== 'workers') doc[key] = value;
    let workers = this.#workers;
    if (Array.isArray(d.removed)) for (const url of d.removed) if (typeof url === 'string') workers.delete(url);
    for (const patch of d.workers) {
      if (!isObject(patch) || typeof patch.url !== 'string') continue;
      const entry = workers.get(patch.url);
      if (entry === undefined) {
        workers.set(patch.url, patch);
        continue;
      }
      const { latency_added: added, ...fields } = patch;
      Object.assign(entry, fields);
      if (added !== undefined) {
        const latency = withAdded(entry.latency, added);
        // Buckets this document does not hold: the stream cannot be followed.
        if (latency === undefined) return undefined;
        entry.latency = latency;
      }
    }
    if (Array.isArray(d.order)) {
      const ordered = new Map<string, Json>();
      for (const url of d.order) {
        const entry = typeof url === 'string' ? workers.get(url) : undefined;
        if (entry !== undefined) ordered.set(url as string, entry);
      }
      workers = this.#workers = ordered;
    }
    const clock = typeof d.sample_clock_ms === 'number' ? d.sample_clock_ms : null;
    // Every worker's sample time, in document order, when many moved at once.
    const column = Array.isArray(d.sample_at_ms) && d.sample_at_ms.length === workers.size ? (d.sample_at_ms as unknown[]) : null;
    const list: Json[] = [];
    for (const w of workers.values()) {
      if (column !== null) {
        const at = column[list.length];
        if (typeof at === 'number' || at === null) w.sample_at_ms = at;
      }
      const at = w.sample_at_ms;
      if (clock !== null && typeof at === 'number') w.sample_age_ms = Math.max(0, clock - at);
      else if (at === null) w.sample_age_ms = null;
      list.push(w);
    }
    doc.workers = list;
    return doc;
  }
}

/**
 * A worker's `latency` after `latency_added`: each histogram's new observations added
 * to every cumulative bucket from theirs up, and its new sum. New objects, never the
 * old ones changed: readers keep what they read from the previous document.
 */
function withAdded(latency: unknown, added: unknown): Json | undefined {
  if (!isObject(latency) || !isObject(added)) return undefined;
  const out: Json = {};
  for (const [name, h] of Object.entries(latency)) {
    const a = added[name];
    // A histogram that took nothing is not in the delta.
    if (a === undefined) {
      out[name] = h;
      continue;
    }
    if (!isObject(h) || !Array.isArray(h.buckets) || typeof h.count !== 'number' || !isObject(a) || !Array.isArray(a.added))
      return undefined;
    const counts = h.buckets.map((b: unknown) => (isObject(b) && typeof b.count === 'number' ? b.count : NaN));
    let count = h.count;
    for (const pair of a.added as unknown[]) {
      if (!Array.isArray(pair) || typeof pair[0] !== 'number' || typeof pair[1] !== 'number' || pair[0] < 0 || pair[0] > counts.length)
        return undefined;
      const [from, n] = pair as [number, number];
      for (let j = from; j < counts.length; j++) counts[j] = counts[j]! + n;
      count += n;
    }
    out[name] = {
      buckets: h.buckets.map((b: unknown, i) => ({ le: isObject(b) ? b.le : null, count: counts[i] })),
      count,
      sum: a.sum,
    };
  }
  return out;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
