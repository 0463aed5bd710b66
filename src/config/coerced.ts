import type { ConfigCodeName } from './codes.js';

/** Where a raw value came from: its problems are worded for that source. */
export type SourceKind = 'flag' | 'env' | 'rc';

/** One raw value read as its option's type, or the parse problem that stops it. */
export type Coerced = { ok: true; value: unknown } | { ok: false; code: ConfigCodeName; message: string };
