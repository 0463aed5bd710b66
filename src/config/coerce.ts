import { didYouMean } from '../cli/index.js';
import { coerceKvEvents } from './kv-events-value.js';
import { shorten } from './shorten.js';
import type { Coerced, SourceKind } from './coerced.js';
import type { OptionSpec } from './schema.js';

/** Which kind of source a raw value came from; each delivers values differently. */
export type { Coerced, SourceKind };

/**
 * Turn one raw value into the option's type, or say why it cannot be read (a parse
 * problem). Ranges are not checked here: a number that parses is a value, right or
 * wrong, and the value rules judge it with the reference wording.
 *
 * Flags arrive from yargs (numbers undeclared so the typed text survives: `abc`
 * stays 'abc' instead of becoming NaN), env values are always strings, rc values are
 * whatever YAML/JSON/JS produced.
 */
export function coerce(spec: OptionSpec, raw: unknown, kind: SourceKind): Coerced {
  const flag = `--${spec.flag}`;
  // A repeated scalar flag: the last one wins, as in most CLIs.
  if (kind === 'flag' && spec.type !== 'url-list' && spec.type !== 'string-list' && Array.isArray(raw)) raw = raw[raw.length - 1];

  switch (spec.type) {
    case 'integer':
    case 'number':
      return coerceNumber(spec, raw, flag, kind);
    case 'boolean':
      return coerceBoolean(raw, flag);
    case 'enum':
      return coerceEnum(spec, raw, flag);
    case 'string':
      if (typeof raw === 'string') return { ok: true, value: raw.trim() };
      if (typeof raw === 'number' && kind === 'rc') return { ok: true, value: String(raw) };
      return typeError(flag, 'a string', raw);
    case 'url-list':
      return coerceUrlList(raw, flag, kind);
    case 'string-list':
      return coerceStringList(raw, flag, kind);
    case 'kv-events':
      return coerceKvEvents(raw, flag, kind);
  }
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function coerceNumber(spec: OptionSpec, raw: unknown, flag: string, kind: SourceKind): Coerced {
  const integer = spec.type === 'integer';
  const expected = integer ? 'an integer' : 'a number';
  if (kind === 'flag' && (raw === true || raw === '')) return { ok: false, code: 'PARSE_MISSING_VALUE', message: `${flag} needs a value` };
  let n: number;
  if (typeof raw === 'number') {
    n = raw;
  } else if (typeof raw === 'string') {
    const text = raw.trim();
    if (DECIMAL.test(text)) n = Number(text);
    else if (!integer && /^[+-]?(?:Infinity|inf)$/i.test(text)) n = text.startsWith('-') ? -Infinity : Infinity;
    else
      return {
        ok: false,
        code: 'PARSE_NOT_A_NUMBER',
        message: `invalid value '${shorten(String(raw))}' for ${flag}: expected ${expected}`,
      };
  } else {
    return typeError(flag, expected, raw);
  }
  if (Number.isNaN(n))
    return { ok: false, code: 'PARSE_NOT_A_NUMBER', message: `invalid value '${shorten(String(raw))}' for ${flag}: expected ${expected}` };
  if (integer && !Number.isSafeInteger(n)) {
    return { ok: false, code: 'PARSE_NOT_A_NUMBER', message: `invalid value '${shorten(String(raw))}' for ${flag}: expected an integer` };
  }
  return { ok: true, value: n };
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

function coerceBoolean(raw: unknown, flag: string): Coerced {
  if (typeof raw === 'boolean') return { ok: true, value: raw };
  if (raw === 1 || raw === 0) return { ok: true, value: raw === 1 };
  if (typeof raw === 'string') {
    const word = raw.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return { ok: true, value: true };
    if (FALSE_WORDS.has(word)) return { ok: true, value: false };
    return {
      ok: false,
      code: 'PARSE_INVALID_BOOLEAN',
      message: `invalid value '${shorten(String(raw))}' for ${flag}: expected true or false`,
    };
  }
  return typeError(flag, 'true or false', raw);
}

function coerceEnum(spec: OptionSpec, raw: unknown, flag: string): Coerced {
  const choices = spec.choices ?? [];
  if (raw === true || raw === '') return { ok: false, code: 'PARSE_MISSING_VALUE', message: `${flag} needs a value` };
  if (typeof raw !== 'string') return typeError(flag, `one of ${choices.join(', ')}`, raw);
  const value = raw.trim();
  if (choices.includes(value)) return { ok: true, value };
  const guess = didYouMean(value, choices);
  return {
    ok: false,
    code: 'PARSE_INVALID_CHOICE',
    message: `invalid value '${shorten(String(raw))}' for ${flag}: expected one of ${choices.join(', ')}${guess ? ` (did you mean ${guess}?)` : ''}`,
  };
}

function coerceUrlList(raw: unknown, flag: string, kind: SourceKind): Coerced {
  let items: unknown[];
  if (Array.isArray(raw)) items = raw;
  // Env values also accept commas, the usual list separator in container specs.
  else if (typeof raw === 'string') items = kind === 'env' ? raw.split(',').filter((s) => s.trim() !== '') : [raw];
  else return typeError(flag, 'a list of URLs', raw);
  if (kind === 'flag' && items.length === 0) return { ok: false, code: 'PARSE_MISSING_VALUE', message: `${flag} needs at least one URL` };
  const urls: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') return typeError(flag, 'a list of URLs', item);
    // Whitespace-only entries are kept so the value rule can reject them by name.
    if (item.trim() === '') urls.push('');
    else for (const part of item.trim().split(/\s+/)) urls.push(part.replace(/\/+$/, ''));
  }
  return { ok: true, value: urls };
}

/** Words, repeated or space-separated (commas too in the environment); each entry's own syntax is a value rule's to judge. */
function coerceStringList(raw: unknown, flag: string, kind: SourceKind): Coerced {
  let items: unknown[];
  if (Array.isArray(raw)) items = raw;
  else if (typeof raw === 'string') items = kind === 'env' ? raw.split(',') : [raw];
  else return typeError(flag, 'a list of words', raw);
  if (kind === 'flag' && items.length === 0) return { ok: false, code: 'PARSE_MISSING_VALUE', message: `${flag} needs a value` };
  const words: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') return typeError(flag, 'a list of words', item);
    words.push(
      ...item
        .trim()
        .split(/\s+/)
        .filter((w) => w !== ''),
    );
  }
  return { ok: true, value: words };
}

function typeError(flag: string, expected: string, raw: unknown): Coerced {
  return { ok: false, code: 'PARSE_INVALID_TYPE', message: `invalid value for ${flag}: expected ${expected}, got ${describe(raw)}` };
}

function describe(raw: unknown): string {
  if (raw === null) return 'null';
  if (Array.isArray(raw)) return 'a list';
  if (raw instanceof Date) return 'a date';
  if (typeof raw === 'object') return 'a mapping';
  if (typeof raw === 'string') return `'${shorten(raw)}'`;
  return `${typeof raw} ${shorten(String(raw))}`;
}
