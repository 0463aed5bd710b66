import { WORKER_FIELD_ROWS } from '../../contract/index.js';
import type { WorkerFieldRow, WorkerFields } from '../../contract/index.js';
import type { Worker } from '../upstream/worker.js';

/**
 * A worker's fields as JSON, and encoded without the closing brace (its age and latency
 * follow); the same object while the fields stand. Written when first read: a stream's
 * delta reads only the workers it sends, the whole document every one.
 */
export class FieldsJson {
  #text: string | undefined;
  #open: Buffer | undefined;

  /** `fields` is a snapshot (workerFields copies what it reads), so writing it later writes what it held. */
  constructor(readonly fields: WorkerFields) {}

  get text(): string {
    return (this.#text ??= workerFieldsJson(this.fields));
  }

  get open(): Buffer {
    return (this.#open ??= Buffer.from(this.text.slice(0, -1)));
  }
}

/**
 * Each worker's fields as JSON, written again only when one of them changed: between
 * two documents most workers of a large fleet change nothing but their sample's age,
 * which is written apart. Keyed by the worker object, as WorkerLatencyJson.
 */
export class WorkerFieldsJson {
  readonly #cache = new WeakMap<Worker, FieldsJson>();

  of(worker: Worker, fields: WorkerFields): FieldsJson {
    const hit = this.#cache.get(worker);
    if (hit !== undefined && sameFields(hit.fields, fields)) return hit;
    const json = new FieldsJson(fields);
    this.#cache.set(worker, json);
    return json;
  }
}

/**
 * Whether two readings of a worker's fields write the same JSON, and a worker's fields
 * as JSON: both compiled once, at load, from the contract's WORKER_FIELDS, as
 * fast-json-stringify compiles a schema. At thousands of workers per document,
 * JSON.stringify walking each entry, and a loop over the rows reading each field by a
 * computed key, were most of what was left of the document's cost; the compiled code
 * is what a hand-written comparison and writer would be, and a new row is in both.
 * The output is what JSON.stringify would write (same keys, same order); a test holds
 * the two together over live documents (test/router/worker-fields.test.ts).
 */
const compiled = compileWorkerFields(WORKER_FIELD_ROWS);

/**
 * The fields hold their own copies of the poll counts; the push and event feeds'
 * counters move with every frame, so a worker with either is taken as changed.
 */
export const sameFields: (a: WorkerFields, b: WorkerFields) => boolean = compiled.same;

export const workerFieldsJson: (f: WorkerFields) => string = compiled.json;

/** The comparison and the writer, as code over the rows (field names are the contract's identifiers, never input). */
function compileWorkerFields(rows: typeof WORKER_FIELD_ROWS): { same: typeof sameFields; json: typeof workerFieldsJson } {
  const written = rows.filter(([, row]) => row.compare !== 'apart');
  const feeds = written.filter(([, row]) => row.compare === 'whole').map(([key]) => `a.${key} !== null || b.${key} !== null`);
  const compares = written.flatMap(([key, row]) => {
    if (row.compare === 'value') return [`a.${key} !== b.${key}`];
    if (row.compare === 'entries') return [`!h.sameEntries(a.${key}, b.${key})`];
    return [];
  });
  const same = `return !(${[...feeds, ...compares].join(' || ')});`;
  const parts = written.map(
    ([key, row], i) => `${JSON.stringify(`${i === 0 ? '{' : ','}${JSON.stringify(key)}:`)} + ${writerOf(row, `f.${key}`)}`,
  );
  const json = `return ${parts.join(' + ')} + '}';`;
  // Compiled from the contract's own table, once: no input reaches this code.
  const sameFn = new Function('h', 'a', 'b', same) as (h: Helpers, a: WorkerFields, b: WorkerFields) => boolean;
  const jsonFn = new Function('h', 'f', json) as (h: Helpers, f: WorkerFields) => string;
  return { same: (a, b) => sameFn(HELPERS, a, b), json: (f) => jsonFn(HELPERS, f) };
}

/** The expression that writes one field's value, `v`, by its kind. */
function writerOf(row: WorkerFieldRow, v: string): string {
  const k = row.kind;
  switch (k.json) {
    case 'number':
      return `h.num(${v})`;
    case 'boolean':
      return k.nullable ? `String(${v})` : `(${v} ? 'true' : 'false')`;
    case 'counts':
      return k.nullable ? `(${v} === null ? 'null' : h.counts(${v}))` : `h.counts(${v})`;
    case 'string':
    case 'object':
      return k.nullable ? `(${v} === null ? 'null' : JSON.stringify(${v}))` : `JSON.stringify(${v})`;
  }
}

interface Helpers {
  num(v: number | null): string;
  counts(v: Readonly<Record<string, number>>): string;
  sameEntries(a: object | null, b: object | null): boolean;
}

const HELPERS: Helpers = { num, counts: countsJson, sameEntries };

/** A number as JSON writes it: non-finite ones (and null) are null. */
function num(v: number | null): string {
  return v !== null && Number.isFinite(v) ? String(v) : 'null';
}

function countsJson(counts: Readonly<Record<string, number>>): string {
  let out = '{';
  let first = true;
  for (const name in counts) {
    out += `${first ? '' : ','}${JSON.stringify(name)}:${num(counts[name]!)}`;
    first = false;
  }
  return `${out}}`;
}

/** Two flat objects (or nulls) with the same entries, in any order. */
function sameEntries(a: object | null, b: object | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let n = 0;
  for (const key in ra) {
    if (ra[key] !== rb[key]) return false;
    n++;
  }
  for (const _key in rb) n--;
  return n === 0;
}
