/**
 * Prometheus text exposition (format 0.0.4) writer.
 *
 * Owners of metrics keep their values in typed arrays and hand samples over at scrape
 * time, so this writer holds no state besides the text being built. Output follows the
 * shape the Rust sgl-router and the Go client produce (`le="64"`, never `64.0`), which
 * keeps our simulated engines and router diffable against the real ones.
 */

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  labels?: Labels;
  /** The labels already rendered (`labelPairs`), for a series whose labels never change: it is written as is. */
  pairs?: string;
  value: number;
}

export interface HistogramSeries {
  labels?: Labels;
  /** As Sample.pairs. */
  pairs?: string;
  /** upper bounds, ascending, without +Inf */
  bounds: readonly number[];
  /** per-bucket counts, NOT cumulative, length bounds.length + 1 (last = above the top bound) */
  counts: ArrayLike<number>;
  sum: number;
}

export class ExpositionWriter {
  private out = '';
  // A second HELP/TYPE for one name makes the whole scrape invalid for Prometheus, so a
  // repeated family is a caller bug worth failing loudly on (any test that renders catches it).
  private readonly seen = new Set<string>();

  counter(name: string, help: string, samples: readonly Sample[]): this {
    return this.simple(name, 'counter', help, samples);
  }

  gauge(name: string, help: string, samples: readonly Sample[]): this {
    return this.simple(name, 'gauge', help, samples);
  }

  histogram(name: string, help: string, series: readonly HistogramSeries[]): this {
    this.header(name, 'histogram', help);
    let out = '';
    const bucketName = name + '_bucket{';
    for (const s of series) {
      const base = s.pairs ?? renderLabelPairs(s.labels);
      const open = base === '' ? bucketName : bucketName + base + ',';
      const bounds = s.bounds;
      const counts = s.counts;
      let cumulative = 0;
      for (let i = 0; i < bounds.length; i++) {
        cumulative += counts[i] ?? 0;
        out += open + 'le="' + formatNumber(bounds[i]!) + '"} ' + formatNumber(cumulative) + '\n';
      }
      // Tolerate a short or long counts array rather than throw mid-scrape: the +Inf bucket
      // takes the overflow slot, and _count is defined as the +Inf bucket so they always agree.
      cumulative += counts[bounds.length] ?? 0;
      const total = formatNumber(cumulative);
      out += open + 'le="+Inf"} ' + total + '\n';
      const suffixLabels = base === '' ? ' ' : '{' + base + '} ';
      out += name + '_sum' + suffixLabels + formatNumber(s.sum) + '\n';
      out += name + '_count' + suffixLabels + total + '\n';
    }
    this.out += out;
    return this;
  }

  /**
   * A gauge with one series per item, the value read from each (null: no series),
   * written straight from the items: a family over 4,096 workers builds no sample
   * object and no label record per worker (BENCHMARKS.md, section 15).
   */
  gaugeEach<T>(name: string, help: string, items: readonly T[], pairs: (item: T) => string, value: (item: T) => number | null): this {
    this.header(name, 'gauge', help);
    let out = '';
    for (const item of items) {
      const v = value(item);
      if (v !== null) out += name + '{' + pairs(item) + '} ' + formatNumber(v) + '\n';
    }
    this.out += out;
    return this;
  }

  toString(): string {
    return this.out;
  }

  private simple(name: string, type: string, help: string, samples: readonly Sample[]): this {
    this.header(name, type, help);
    let out = '';
    for (const s of samples) {
      const pairs = s.pairs ?? renderLabelPairs(s.labels);
      out += (pairs === '' ? name + ' ' : name + '{' + pairs + '} ') + formatNumber(s.value) + '\n';
    }
    this.out += out;
    return this;
  }

  private header(name: string, type: string, help: string): void {
    if (this.seen.has(name)) throw new Error(`metric family ${name} written twice`);
    this.seen.add(name);
    this.out += '# HELP ' + name + ' ' + escapeHelp(help) + '\n# TYPE ' + name + ' ' + type + '\n';
  }
}

/** Labels as the exposition writes them, `a="x",b="y"`, values escaped: render once for a series whose labels never change. */
export function labelPairs(labels: Labels): string {
  return renderLabelPairs(labels);
}

function renderLabelPairs(labels: Labels | undefined): string {
  if (labels === undefined) return '';
  let out = '';
  for (const key in labels) {
    if (out !== '') out += ',';
    out += key + '="' + escapeLabelValue(labels[key]!) + '"';
  }
  return out;
}

const LABEL_SPECIALS = /[\\"\n]/;
const HELP_SPECIALS = /[\\\n]/;

function escapeLabelValue(v: string): string {
  // Almost every value is a plain identifier or URL; test once before paying for replaces.
  if (!LABEL_SPECIALS.test(v)) return v;
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  if (!HELP_SPECIALS.test(v)) return v;
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Go/Rust-client spelling: integers bare (`64`, not `64.0` or `6.4e+1`), non-finite as `+Inf`/`-Inf`/`NaN`. */
function formatNumber(v: number): string {
  if (Number.isInteger(v)) {
    // String() switches to exponent notation from 1e21 up; BigInt prints the exact integer.
    return v < 1e21 && v > -1e21 ? String(v) : BigInt(v).toString();
  }
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (v !== v) return 'NaN';
  return String(v);
}
