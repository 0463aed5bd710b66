import { describe, expect, it } from 'vitest';
import { WORKER_FIELDS, WORKER_FIELD_ROWS, readFields } from '../../src/contract/index.js';
import type { WorkerFieldRow, WorkerFields } from '../../src/contract/index.js';
import { HistogramFamily } from '../../src/router/metrics/families.js';
import type { AdminStateParts, LatencyJson } from '../../src/router/server/admin-state.js';
import { adminStateBody, adminStateObject } from '../../src/router/server/admin-state.js';
import { FieldsJson, WorkerFieldsJson, sameFields, workerFieldsJson } from '../../src/router/server/worker-fields-json.js';
import type { Worker } from '../../src/router/upstream/worker.js';
import { workerFields } from '../helpers/worker-fields.js';

/**
 * A worker's entry from the contract's one table (src/contract/worker-fields.ts): the
 * router's change check and writer are compiled from its rows, so each row is tried
 * here, changed one at a time, against what JSON.stringify writes and what changed.
 */

const base: WorkerFields = workerFields('http://a:30000', {
  dp_size: 2,
  load_poll_failures_total: 1,
  load_poll_failures: { connect: 0, http_status: 0, timeout: 1, too_large: 0, unreadable: 0 },
  last_poll_error: { reason: 'timeout', message: 'no answer in 1000 ms', at_ms: 1_767_225_600_000 },
});

/** A copy of `base`, deep enough that no object is shared: the router's readings are snapshots. */
const copy = (): WorkerFields => structuredClone(base);

/** Another value of the same kind for the field, unlike any `base` holds. */
function otherValue(key: keyof WorkerFields, row: WorkerFieldRow): unknown {
  const v = base[key];
  const k = row.kind;
  if (k.values) return k.values.find((x) => x !== v);
  switch (k.json) {
    case 'string':
      return `${String(v)}/other`;
    case 'boolean':
      return !v;
    case 'number':
      return (v as number) + 1;
    case 'counts':
      return { ...(v as Record<string, number>), connect: 7 };
    case 'object':
      return v === null ? { endpoints: ['tcp://127.0.0.1:5557'], last_error: null } : { ...(v as object), message: 'connection refused' };
  }
}

const ROWS = WORKER_FIELD_ROWS.filter(([, row]) => row.compare !== 'apart') as Array<[keyof WorkerFields, WorkerFieldRow]>;

describe('the change check and the writer, compiled from WORKER_FIELDS', () => {
  it('covers every field the entry writes, apart from the age and the latency', () => {
    expect(Object.keys(base)).toEqual(ROWS.map(([key]) => key));
    expect(WORKER_FIELD_ROWS.filter(([, row]) => row.compare === 'apart').map(([key]) => key)).toEqual(['sample_age_ms', 'latency']);
  });

  it('two readings with the same fields are the same, though no object is shared', () => {
    expect(sameFields(copy(), copy())).toBe(true);
    expect(sameFields({ ...copy(), last_poll_error: null }, { ...copy(), last_poll_error: null })).toBe(true);
  });

  it.each(ROWS)('a change of %s alone is a change, and is written as JSON.stringify writes it', (key, row) => {
    const changed = { ...copy(), [key]: otherValue(key, row) } as WorkerFields;
    expect(changed[key]).not.toEqual(base[key]);
    expect(sameFields(copy(), changed)).toBe(false);
    expect(sameFields(changed, copy())).toBe(false);
    expect(workerFieldsJson(changed)).toBe(JSON.stringify(changed));
  });

  it.each(ROWS.filter(([key, row]) => row.kind.nullable && base[key] !== null))('%s may be null, and is written so', (key) => {
    const f = { ...copy(), [key]: null } as WorkerFields;
    expect(workerFieldsJson(f)).toBe(JSON.stringify(f));
    expect(sameFields(f, { ...copy(), [key]: null } as WorkerFields)).toBe(true);
    expect(sameFields(f, copy())).toBe(false);
  });

  it('a worker with a load or event feed is taken as changed: its counters move with every frame', () => {
    const feed = { ...copy(), load_push: otherValue('load_push', WORKER_FIELDS.load_push) } as WorkerFields;
    expect(sameFields(feed, structuredClone(feed))).toBe(false);
  });

  it('writes a non-finite number as JSON does (null), and strings with quotes and non-ASCII escaped', () => {
    const f = { ...copy(), kv_usage: Number.NaN, waiting: Infinity, url: 'http://ü"\\x:1' };
    expect(workerFieldsJson(f)).toBe(JSON.stringify(f));
  });

  it('keeps a worker’s JSON while its fields stand, and writes it again when one moves', () => {
    const cache = new WorkerFieldsJson();
    const worker = {} as Worker;
    const first = cache.of(worker, copy());
    expect(cache.of(worker, copy())).toBe(first);
    expect(cache.of(worker, { ...copy(), inflight: 3 })).not.toBe(first);
  });

  it('the console reads each field back by its kind: a mistyped one is unknown (null), an absent one absent', () => {
    const raw = JSON.parse(workerFieldsJson(copy())) as Record<string, unknown>;
    expect(readFields(WORKER_FIELDS, raw)).toEqual(copy());
    const odd = { ...raw, waiting: '3', breaker: 'ajar', healthy: 1, load_poll_failures: [] } as Record<string, unknown>;
    delete odd.kv_usage;
    const read = readFields(WORKER_FIELDS, odd);
    expect(read).toMatchObject({ waiting: null, breaker: null, healthy: null, load_poll_failures: null, running: 2 });
    expect('kv_usage' in read).toBe(false);
  });
});

describe('the document as an object and as bytes', () => {
  it('adminStateObject is what a client parses from adminStateBody, for the same parts', () => {
    const ttft = new HistogramFamily('ttft', '', ['worker'], [0.1, 0.5]);
    const duration = new HistogramFamily('duration', '', ['worker'], [1]);
    ttft.observe(['a'], 0.2);
    duration.observe(['a'], 2);
    const readings = { ttft_seconds: ttft.reading(['a']), duration_seconds: duration.reading(['a']) };
    const text = `{"ttft_seconds":${readings.ttft_seconds.json()},"duration_seconds":${readings.duration_seconds.json()}}`;
    const latency: LatencyJson = { ttftCount: 1, durationCount: 1, text, bytes: Buffer.from(text), readings };
    const withFeed = { ...copy(), url: 'http://b:30000', load_push: otherValue('load_push', WORKER_FIELDS.load_push) } as WorkerFields;
    const parts: AdminStateParts = {
      head: {
        router: { version: 'x', policy: 'cache_aware' },
        decisions: { cache_hit: 1, cache_miss: 0, cache_worker_queued: 0, all_queued: 0 },
        events: [],
        timestamp_ms: 1_767_225_600_000,
      } as unknown as AdminStateParts['head'],
      workers: [copy(), withFeed].map((f, i) => ({ fields: f, json: new FieldsJson(f), sampleAgeMs: i === 0 ? 120 : null, latency })),
      sampleClockMs: 1_120,
    };
    const object = adminStateObject(parts);
    expect(JSON.parse(adminStateBody(parts).toString())).toEqual(object);
    expect(Object.keys(object.workers[0]!)).toEqual(Object.keys(WORKER_FIELDS));
  });
});
