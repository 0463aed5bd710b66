/**
 * Tolerant parser for the Prometheus text format (0.0.4), also accepting OpenMetrics text
 * (`# UNIT`, `# EOF`, `_created`, exemplars, `# TYPE foo counter` with `foo_total` samples).
 *
 * Readers are the load sampler (engines' /metrics every few hundred ms) and the console (any
 * router's /metrics), so a single odd line must never cost the whole scrape: malformed lines
 * are skipped and reported through `ParseOptions.onError`, which is also how a caller counts
 * them. The scanner walks the text by index with no regex, so there is no backtracking to
 * trip over, and strings are only sliced for names, label values and number tokens.
 */

export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

export interface ParsedFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: ParsedSample[];
}

export interface ParsedHistogram {
  /** without le */
  labels: Record<string, string>;
  /** cumulative, ascending, le may be Infinity */
  buckets: { le: number; count: number }[];
  /** NaN when the exposition carried no `_sum` */
  sum: number;
  /** from `_count`, else the `+Inf` bucket, else NaN */
  count: number;
}

export interface ParseOptions {
  /**
   * Called once per skipped line. `line` is 1-based; `text` is the line without its line
   * ending. The number of calls is the number of lines skipped.
   */
  onError?: (line: number, text: string, reason: string) => void;
}

type FamilyType = ParsedFamily['type'];

// OpenMetrics-only types are folded into the five we expose; the declared word is still
// remembered (see `declared`) because it decides which sample suffixes belong to the family.
// Maps, not object literals: a TYPE word such as "constructor" must not find a prototype member.
const TYPE_WORDS: ReadonlyMap<string, FamilyType> = new Map<string, FamilyType>([
  ['counter', 'counter'],
  ['gauge', 'gauge'],
  ['histogram', 'histogram'],
  ['summary', 'summary'],
  ['untyped', 'untyped'],
  ['unknown', 'untyped'],
  ['gaugehistogram', 'histogram'],
  ['stateset', 'gauge'],
  ['info', 'untyped'],
]);

const SUFFIXES: ReadonlyMap<string, readonly string[]> = new Map([
  ['counter', ['_total', '_created']],
  ['histogram', ['_bucket', '_sum', '_count', '_created']],
  ['gaugehistogram', ['_bucket', '_gsum', '_gcount', '_sum', '_count']],
  ['summary', ['_sum', '_count', '_created']],
  ['info', ['_info']],
]);

const SP = 32;
const TAB = 9;
const CR = 13;
const HASH = 35;
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const EQUALS = 61;
const LBRACE = 123;
const RBRACE = 125;

/** Keyed by family name, in order of first appearance. */
export function parsePrometheusText(text: string, options?: ParseOptions): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  // Family name -> TYPE word as written; only families with a TYPE line claim suffixed samples.
  const declared = new Map<string, string>();
  const onError = options?.onError;
  const n = text.length;

  // Most expositions list one family's samples back to back; skip the resolution on repeats.
  let lastName = '';
  let lastFamily: ParsedFamily | undefined;
  const prevLabelNames: (string | undefined)[] = [];
  const prevLabelValues: (string | undefined)[] = [];
  const lineLabels: string[] = [];
  let nextBackslash = -1;

  let pos = 0;
  let lineNo = 0;
  while (pos < n) {
    let eol = text.indexOf('\n', pos);
    if (eol < 0) eol = n;
    lineNo++;
    let end = eol;
    if (end > pos && text.charCodeAt(end - 1) === CR) end--;
    const lineStart = pos;
    pos = eol + 1;

    let i = skipBlank(text, lineStart, end);
    if (i === end) continue;

    let error: string | undefined;
    if (text.charCodeAt(i) === HASH) {
      i = skipBlank(text, i + 1, end);
      const wordEnd = scanWord(text, i, end);
      const word = text.slice(i, wordEnd);
      if (word === 'EOF') break;
      if (word !== 'HELP' && word !== 'TYPE' && word !== 'UNIT') continue; // free-form comment
      const nameStart = skipBlank(text, wordEnd, end);
      const nameEnd = scanMetricName(text, nameStart, end);
      if (nameEnd === nameStart || (nameEnd < end && !isBlank(text.charCodeAt(nameEnd)))) {
        error = `invalid metric name in # ${word}`;
      } else {
        const name = text.slice(nameStart, nameEnd);
        const restStart = skipBlank(text, nameEnd, end);
        if (word === 'HELP') {
          const fam = familyFor(families, name);
          // Keep the first HELP: a repeat is invalid input, and the first is what Prometheus shows.
          if (fam.help === undefined) fam.help = unescapeHelp(text.slice(restStart, end));
        } else if (word === 'TYPE') {
          const typeEnd = scanWord(text, restStart, end);
          const typeWord = text.slice(restStart, typeEnd);
          const type = TYPE_WORDS.get(typeWord);
          if (type === undefined) error = `unknown type "${typeWord}"`;
          else if (skipBlank(text, typeEnd, end) !== end) error = 'trailing text after # TYPE';
          else if (declared.has(name)) error = `duplicate # TYPE for ${name}`;
          else {
            declared.set(name, typeWord);
            familyFor(families, name).type = type;
            lastName = '';
          }
        }
        // UNIT carries nothing we expose; it only had to be well-formed.
      }
    } else {
      error = parseSampleLine(text, i, end);
    }

    if (error !== undefined) onError?.(lineNo, text.slice(lineStart, end), error);
  }
  return families;

  // Closure over the loop state keeps the hot path free of result objects.
  function parseSampleLine(src: string, start: number, end: number): string | undefined {
    // Consecutive lines nearly always repeat the metric name and most label names and values
    // (model_name, engine_type, tp_rank ...). Matching them in place against the previous
    // line's strings skips a slice and a string-table lookup per key (about a fifth of the time
    // on label-heavy text), and lets thousands of samples share one string per repeated value.
    let name: string;
    let nameEnd = start + lastName.length;
    if (lastName !== '' && src.startsWith(lastName, start) && !isNameChar(src.charCodeAt(nameEnd))) {
      name = lastName;
    } else {
      nameEnd = scanMetricName(src, start, end);
      if (nameEnd === start) return 'metric name expected';
      name = src.slice(start, nameEnd);
    }
    let i = skipBlank(src, nameEnd, end);
    const labels: Record<string, string> = {};
    if (i < end && src.charCodeAt(i) === LBRACE) {
      i = skipBlank(src, i + 1, end);
      for (let k = 0; ; k++) {
        if (i >= end) return 'unterminated label set';
        if (src.charCodeAt(i) === RBRACE) {
          i++;
          break;
        }
        let label = prevLabelNames[k];
        let labelEnd: number;
        if (label !== undefined && src.startsWith(label, i) && !isLabelChar(src.charCodeAt(i + label.length))) {
          labelEnd = i + label.length;
        } else {
          labelEnd = scanLabelName(src, i, end);
          if (labelEnd === i) return 'label name expected';
          label = src.slice(i, labelEnd);
          // A plain object is what callers index into; refuse the one key that would reach its prototype.
          if (label === '__proto__') return 'reserved label name __proto__';
          prevLabelNames[k] = label;
        }
        for (let d = 0; d < k; d++) if (lineLabels[d] === label) return `duplicate label ${label}`;
        lineLabels[k] = label;
        i = skipBlank(src, labelEnd, end);
        if (i >= end || src.charCodeAt(i) !== EQUALS) return `"=" expected after label ${label}`;
        i = skipBlank(src, i + 1, end);
        if (i >= end || src.charCodeAt(i) !== QUOTE) return `quoted value expected for label ${label}`;
        i++;
        // The closing quote is found natively; the escape-aware loop only runs when a backslash
        // lies before it. `nextBackslash` is shared by the whole text so that search stays linear.
        const close = src.indexOf('"', i);
        if (close < 0 || close >= end) return `unterminated value for label ${label}`;
        if (nextBackslash < i) {
          nextBackslash = src.indexOf('\\', i);
          if (nextBackslash < 0) nextBackslash = n;
        }
        let value: string;
        if (nextBackslash < close) {
          value = '';
          let seg = i;
          for (;;) {
            if (i >= end) return `unterminated value for label ${label}`;
            const c = src.charCodeAt(i);
            if (c === QUOTE) break;
            if (c === BACKSLASH) {
              if (i + 1 >= end) return `unterminated value for label ${label}`;
              value += src.slice(seg, i);
              const e = src.charCodeAt(i + 1);
              // Unknown escapes are kept verbatim rather than rejected, as the Prometheus server does.
              value += e === 110 ? '\n' : e === BACKSLASH ? '\\' : e === QUOTE ? '"' : src.slice(i, i + 2);
              i += 2;
              seg = i;
            } else {
              i++;
            }
          }
          value += src.slice(seg, i);
          prevLabelValues[k] = undefined;
        } else {
          const prev = prevLabelValues[k];
          // Only escape-free values are remembered, so their raw text equals the value itself.
          if (prev !== undefined && prev.length === close - i && src.startsWith(prev, i)) {
            value = prev;
          } else {
            value = src.slice(i, close);
            prevLabelValues[k] = value;
          }
          i = close;
        }
        labels[label] = value;
        i = skipBlank(src, i + 1, end);
        if (i < end && src.charCodeAt(i) === COMMA) {
          i = skipBlank(src, i + 1, end);
        } else if (i < end && src.charCodeAt(i) !== RBRACE) {
          return `"," or "}" expected after label ${label}`;
        }
      }
      i = skipBlank(src, i, end);
    } else if (i === nameEnd && i < end) {
      return 'invalid character in metric name';
    }

    if (i >= end) return 'value expected';
    const valueEnd = scanToken(src, i, end);
    const value = parseNumber(src, i, valueEnd);
    if (value === undefined) return `invalid value "${src.slice(i, valueEnd)}"`;
    i = skipBlank(src, valueEnd, end);

    let timestampMs: number | undefined;
    if (i < end && src.charCodeAt(i) !== HASH) {
      const tsEnd = scanToken(src, i, end);
      const ts = parseNumber(src, i, tsEnd);
      if (ts === undefined || !Number.isFinite(ts)) return `invalid timestamp "${src.slice(i, tsEnd)}"`;
      // 0.0.4 timestamps are integer milliseconds; OpenMetrics ones are seconds and, in
      // practice, carry a fraction. An integral OpenMetrics timestamp is read as ms: accepted loss.
      timestampMs = isIntegerToken(src, i, tsEnd) ? ts : ts * 1000;
      i = skipBlank(src, tsEnd, end);
      if (i < end && src.charCodeAt(i) !== HASH) return 'unexpected text after timestamp';
    }
    // Anything from a "#" on is an OpenMetrics exemplar, which we do not keep.

    let fam: ParsedFamily;
    if (name === lastName && lastFamily !== undefined) {
      fam = lastFamily;
    } else {
      fam = resolveFamily(families, declared, name);
      lastName = name;
      lastFamily = fam;
    }
    const sample: ParsedSample = timestampMs === undefined ? { name, labels, value } : { name, labels, value, timestampMs };
    fam.samples.push(sample);
    return undefined;
  }
}

function familyFor(families: Map<string, ParsedFamily>, name: string): ParsedFamily {
  let fam = families.get(name);
  if (fam === undefined) {
    fam = { name, type: 'untyped', samples: [] };
    families.set(name, fam);
  }
  return fam;
}

function resolveFamily(families: Map<string, ParsedFamily>, declared: ReadonlyMap<string, string>, name: string): ParsedFamily {
  // An explicit TYPE for the full name wins: Python's 0.0.4 output declares `x_created` and
  // `x_total` as families of their own.
  if (!declared.has(name)) {
    const us = name.lastIndexOf('_');
    if (us > 0) {
      const base = name.slice(0, us);
      const typeWord = declared.get(base);
      if (typeWord !== undefined && SUFFIXES.get(typeWord)?.includes(name.slice(us)) === true) {
        return families.get(base)!;
      }
    }
  }
  return familyFor(families, name);
}

function isBlank(c: number): boolean {
  return c === SP || c === TAB;
}

function skipBlank(s: string, i: number, end: number): number {
  while (i < end) {
    const c = s.charCodeAt(i);
    if (c !== SP && c !== TAB) break;
    i++;
  }
  return i;
}

function scanWord(s: string, i: number, end: number): number {
  while (i < end) {
    const c = s.charCodeAt(i);
    if (c === SP || c === TAB) break;
    i++;
  }
  return i;
}

/** Like scanWord, but a value or timestamp may be followed directly by an exemplar's "#". */
function scanToken(s: string, i: number, end: number): number {
  while (i < end) {
    const c = s.charCodeAt(i);
    if (c === SP || c === TAB || c === HASH) break;
    i++;
  }
  return i;
}

/** [a-zA-Z_:][a-zA-Z0-9_:]* */
function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 58) || c === 95;
}

function isLabelChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

function scanMetricName(s: string, i: number, end: number): number {
  const start = i;
  while (i < end) {
    const c = s.charCodeAt(i);
    const alpha = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58;
    if (!alpha && !(i > start && c >= 48 && c <= 57)) break;
    i++;
  }
  return i;
}

/** [a-zA-Z_][a-zA-Z0-9_]* */
function scanLabelName(s: string, i: number, end: number): number {
  const start = i;
  while (i < end) {
    const c = s.charCodeAt(i);
    const alpha = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
    if (!alpha && !(i > start && c >= 48 && c <= 57)) break;
    i++;
  }
  return i;
}

function isIntegerToken(s: string, i: number, end: number): boolean {
  if (i < end && (s.charCodeAt(i) === 45 || s.charCodeAt(i) === 43)) i++;
  if (i === end) return false;
  for (; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/** Go's ParseFloat spellings, which is what Prometheus accepts: `+Inf`, `-inf`, `NaN`, `1e3`, `.5`. */
function parseNumber(s: string, start: number, end: number): number | undefined {
  if (start >= end) return undefined;
  // Fast path for the common `123`, `-4`, `0.625`, `7.0`: with at most 15 digits the mantissa
  // and the power of ten are exact, so one division is correctly rounded (Clinger's fast path)
  // and matches Number(). Anything else (exponents, long fractions, Inf/NaN) takes the slow path.
  let i = start;
  let neg = false;
  const c0 = s.charCodeAt(i);
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i++;
  }
  let mantissa = 0;
  let digits = 0;
  let frac = -1;
  for (; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      mantissa = mantissa * 10 + (c - 48);
      digits++;
    } else if (c === 46 && frac < 0) {
      frac = i;
    } else {
      break;
    }
  }
  if (i === end && digits > 0 && digits <= 15) {
    const scale = frac < 0 ? 0 : end - frac - 1;
    const v = scale === 0 ? mantissa : mantissa / POW10[scale]!;
    return neg ? -v : v;
  }
  const token = s.slice(start, end);
  const v = Number(token);
  if (v === v) return v;
  switch (token.toLowerCase()) {
    case 'nan':
    case '+nan':
    case '-nan':
      return NaN;
    case 'inf':
    case '+inf':
    case 'infinity':
    case '+infinity':
      return Infinity;
    case '-inf':
    case '-infinity':
      return -Infinity;
    default:
      return undefined;
  }
}

function unescapeHelp(raw: string): string {
  if (raw.indexOf('\\') < 0) return raw;
  let out = '';
  let seg = 0;
  for (let i = 0; i < raw.length - 1; i++) {
    if (raw.charCodeAt(i) !== BACKSLASH) continue;
    const e = raw.charCodeAt(i + 1);
    // `\"` is an OpenMetrics HELP escape; 0.0.4 never produces it, so accepting it is safe.
    const rep = e === 110 ? '\n' : e === BACKSLASH ? '\\' : e === QUOTE ? '"' : undefined;
    if (rep === undefined) continue;
    out += raw.slice(seg, i) + rep;
    i++;
    seg = i + 1;
  }
  return out + raw.slice(seg);
}

/** Groups `_bucket`/`_sum`/`_count` by label set minus `le`, in order of first appearance. */
export function histogramSeries(family: ParsedFamily): ParsedHistogram[] {
  const bucketName = family.name + '_bucket';
  const sumName = family.name + '_sum';
  const countName = family.name + '_count';
  const gsumName = family.name + '_gsum';
  const gcountName = family.name + '_gcount';
  const groups = new Map<string, ParsedHistogram>();
  for (const s of family.samples) {
    const kind =
      s.name === bucketName ? 0 : s.name === sumName || s.name === gsumName ? 1 : s.name === countName || s.name === gcountName ? 2 : -1;
    if (kind < 0) continue;
    let le: number | undefined;
    if (kind === 0) {
      const raw = s.labels.le;
      le = raw === undefined ? undefined : parseNumber(raw, 0, raw.length);
      if (le === undefined || le !== le) continue;
    }
    const key = labelKey(s.labels);
    let g = groups.get(key);
    if (g === undefined) {
      const labels: Record<string, string> = {};
      for (const k in s.labels) if (k !== 'le') labels[k] = s.labels[k]!;
      g = { labels, buckets: [], sum: NaN, count: NaN };
      groups.set(key, g);
    }
    if (kind === 0) g.buckets.push({ le: le!, count: s.value });
    else if (kind === 1) g.sum = s.value;
    else g.count = s.value;
  }
  const out: ParsedHistogram[] = [];
  for (const g of groups.values()) {
    // Stable sort, then keep the last of equal bounds: a repeated bucket means a later, fresher line.
    g.buckets.sort((a, b) => a.le - b.le);
    let w = 0;
    for (let r = 0; r < g.buckets.length; r++) {
      const b = g.buckets[r]!;
      if (w > 0 && g.buckets[w - 1]!.le === b.le) g.buckets[w - 1] = b;
      else g.buckets[w++] = b;
    }
    g.buckets.length = w;
    if (g.count !== g.count) {
      const top = g.buckets[w - 1];
      if (top !== undefined && top.le === Infinity) g.count = top.count;
    }
    out.push(g);
  }
  return out;
}

function labelKey(labels: Record<string, string>): string {
  const keys = Object.keys(labels);
  if (keys.length === 0 || (keys.length === 1 && keys[0] === 'le')) return '';
  keys.sort();
  let key = '';
  for (const k of keys) if (k !== 'le') key += k + '=' + JSON.stringify(labels[k]) + ',';
  return key;
}

/**
 * Sum of the family's value samples that pass `filter`; undefined when none does.
 * Value samples are those named like the family (plus `_total` for an OpenMetrics-style
 * counter). For a histogram or summary, the `_count` samples are summed instead: bucket and
 * quantile values do not add up to anything meaningful, the observation count does.
 */
export function sumSamples(family: ParsedFamily | undefined, filter?: (labels: Record<string, string>) => boolean): number | undefined {
  if (family === undefined) return undefined;
  let a: string;
  let b: string;
  if (family.type === 'histogram' || family.type === 'summary') {
    a = family.name + '_count';
    b = family.name + '_gcount';
  } else {
    a = family.name;
    b = family.type === 'counter' ? family.name + '_total' : a;
  }
  let total = 0;
  let any = false;
  for (const s of family.samples) {
    if (s.name !== a && s.name !== b) continue;
    if (filter !== undefined && !filter(s.labels)) continue;
    total += s.value;
    any = true;
  }
  return any ? total : undefined;
}
