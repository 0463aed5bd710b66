/**
 * A JSON value's kind as data, carrying the TypeScript type it reads as: the field
 * tables (worker-fields.ts, router-fields.ts) are rows of these, and the document's
 * types, its writer, its change check and its readers are derived from the rows, as
 * RouterConfig is from OPTIONS.
 */
export interface JsonKind<T> {
  /** `counts`: an object of counts by name; `object`: any other object, written and compared whole. */
  readonly json: 'string' | 'boolean' | 'number' | 'counts' | 'object';
  readonly nullable: boolean;
  /** The strings an enumeration may hold; absent for any string. */
  readonly values?: readonly string[];
  /** As the docs' tables name it: `number or null`. */
  readonly label: string;
  /** Never set: carries T for TypeOf. */
  readonly type?: T;
}

/** The TypeScript type a kind reads as. */
export type TypeOf<K> = K extends JsonKind<infer T> ? T : never;

const kind = <T>(json: JsonKind<T>['json'], label: string, values?: readonly string[]): JsonKind<T> =>
  values === undefined ? { json, nullable: false, label } : { json, nullable: false, label, values };

export const string: JsonKind<string> = kind('string', 'string');
export const boolean: JsonKind<boolean> = kind('boolean', 'boolean');
export const number: JsonKind<number> = kind('number', 'number');

/** One of the strings given. */
export function oneOf<const V extends readonly string[]>(...values: V): JsonKind<V[number]> {
  return kind('string', 'string', values);
}

/** An object of counts keyed by name (a cause, a reason): compared entry by entry. */
export function counts<K extends string>(): JsonKind<Record<K, number>> {
  return kind('counts', 'object');
}

/** An object of the shape T, written and compared whole. */
export function object<T extends object>(): JsonKind<T> {
  return kind('object', 'object');
}

export function nullable<T>(k: JsonKind<T>): JsonKind<T | null> {
  return { ...(k as JsonKind<T | null>), nullable: true, label: `${k.label} or null` };
}

/** A row of a field table: the field's kind and, for the docs' table, what it means. */
export interface FieldRow<T = unknown> {
  readonly kind: JsonKind<T>;
  readonly meaning: string;
}

/** The object a field table describes: each key as its kind reads. */
export type FieldsOf<Table extends Readonly<Record<string, FieldRow>>> = {
  -readonly [K in keyof Table]: TypeOf<Table[K]['kind']>;
};

/**
 * An object read from the network against its table: a field that is absent stays
 * absent (undefined), one present with the wrong kind reads as null (unknown), so
 * an older or newer router's document is read for what it holds.
 */
export type Checked<T> = { [K in keyof T]?: T[K] | null };

/** Whether `v` is of kind `k`; an object is checked for being one, not field by field. */
export function isKind(k: JsonKind<unknown>, v: unknown): boolean {
  if (v === null) return k.nullable;
  switch (k.json) {
    case 'string':
      return typeof v === 'string' && (k.values === undefined || k.values.includes(v));
    case 'boolean':
      return typeof v === 'boolean';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'counts':
    case 'object':
      return typeof v === 'object' && !Array.isArray(v);
  }
}

/** `raw`'s fields that `table` names, each checked against its kind (Checked). */
export function readFields<Table extends Readonly<Record<string, FieldRow>>>(
  table: Table,
  raw: Readonly<Record<string, unknown>>,
): Checked<FieldsOf<Table>> {
  const out: Record<string, unknown> = {};
  for (const key in table) {
    if (!(key in raw)) continue;
    const v = raw[key];
    out[key] = isKind(table[key]!.kind, v) ? v : null;
  }
  return out as Checked<FieldsOf<Table>>;
}

/** A field table as the docs' `| field | type | meaning |` rows. */
export function fieldTableMarkdown(table: Readonly<Record<string, FieldRow>>): string {
  const rows = Object.entries(table).map(([key, row]) => `| \`${key}\` | ${row.kind.label} | ${row.meaning} |`);
  return ['| field | type | meaning |', '|---|---|---|', ...rows].join('\n');
}
