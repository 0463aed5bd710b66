import type { AdminWorker } from '../../contract/index.js';
import type { Worker } from '../upstream/worker.js';

/** A worker's entry apart from its sample's age and its latency, which the document keeps separately. */
export type WorkerFields = Omit<AdminWorker, 'sample_age_ms' | 'latency'>;

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
 * Whether two readings of a worker's fields write the same JSON. The fields hold their
 * own copies of the poll counts; the push and event feeds' counters move with every
 * frame, so a worker with either is written again each time.
 */
function sameFields(a: WorkerFields, b: WorkerFields): boolean {
  if (a.load_push !== null || b.load_push !== null || a.kv_events !== null || b.kv_events !== null) return false;
  if (
    a.url !== b.url ||
    a.healthy !== b.healthy ||
    a.breaker !== b.breaker ||
    a.waiting !== b.waiting ||
    a.running !== b.running ||
    a.kv_usage !== b.kv_usage ||
    a.sample_at_ms !== b.sample_at_ms ||
    a.fresh !== b.fresh ||
    a.gated !== b.gated ||
    a.inflight !== b.inflight ||
    a.requests_total !== b.requests_total ||
    a.gate_rejections_total !== b.gate_rejections_total ||
    a.dp_size !== b.dp_size ||
    a.load_poll_failures_total !== b.load_poll_failures_total ||
    a.load_poll_unanswered !== b.load_poll_unanswered ||
    a.load_unreachable !== b.load_unreachable ||
    a.load_source !== b.load_source
  )
    return false;
  const fa = a.load_poll_failures;
  const fb = b.load_poll_failures;
  for (const reason in fa) if (fa[reason as keyof typeof fa] !== fb[reason as keyof typeof fb]) return false;
  if (Object.keys(fa).length !== Object.keys(fb).length) return false;
  const ea = a.last_poll_error;
  const eb = b.last_poll_error;
  return ea === eb || (ea !== null && eb !== null && ea.reason === eb.reason && ea.message === eb.message && ea.at_ms === eb.at_ms);
}

/**
 * A worker's fields as JSON, written field by field: at thousands of workers per
 * document, JSON.stringify walking each entry was most of what was left of the
 * document's cost. The output is what JSON.stringify would write (same keys, same
 * order); a test holds a live document's workers against the contract's field list.
 * The rare nested objects (push and KV event feeds) go through JSON.stringify.
 */
export function workerFieldsJson(f: WorkerFields): string {
  const failures = f.load_poll_failures;
  let failuresJson = '{';
  let first = true;
  for (const reason in failures) {
    failuresJson += `${first ? '' : ','}${JSON.stringify(reason)}:${num(failures[reason as keyof typeof failures])}`;
    first = false;
  }
  failuresJson += '}';
  return (
    `{"url":${JSON.stringify(f.url)},"healthy":${f.healthy},"breaker":${JSON.stringify(f.breaker)}` +
    `,"waiting":${num(f.waiting)},"running":${num(f.running)},"kv_usage":${num(f.kv_usage)}` +
    `,"sample_at_ms":${num(f.sample_at_ms)},"fresh":${f.fresh},"gated":${f.gated},"inflight":${num(f.inflight)}` +
    `,"requests_total":${num(f.requests_total)},"gate_rejections_total":${num(f.gate_rejections_total)},"dp_size":${num(f.dp_size)}` +
    `,"load_poll_failures_total":${num(f.load_poll_failures_total)},"load_poll_failures":${failuresJson}` +
    `,"last_poll_error":${lastErrorJson(f.last_poll_error)},"load_poll_unanswered":${num(f.load_poll_unanswered)}` +
    `,"load_unreachable":${f.load_unreachable},"load_source":${JSON.stringify(f.load_source)}` +
    `,"load_push":${f.load_push === null ? 'null' : JSON.stringify(f.load_push)}` +
    `,"kv_events":${f.kv_events === null ? 'null' : JSON.stringify(f.kv_events)}}`
  );
}

/** A number as JSON writes it: non-finite ones (and null) are null. */
function num(v: number | null): string {
  return v !== null && Number.isFinite(v) ? String(v) : 'null';
}

function lastErrorJson(e: WorkerFields['last_poll_error']): string {
  return e === null ? 'null' : `{"reason":${JSON.stringify(e.reason)},"message":${JSON.stringify(e.message)},"at_ms":${num(e.at_ms)}}`;
}
