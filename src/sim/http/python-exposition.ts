/**
 * Prometheus text exposition spelled the way Python's prometheus_client writes it,
 * because both real engines export through that library: label pairs sorted by name
 * (`le` among them), every value a Python float (`12.0`, `1.048576e+06`, `1e-05`),
 * counters as `<name>_total` followed by a `<name>_created` gauge family, histograms
 * as buckets, `_count`, `_sum`, then their own `_created` family (docs/simulator.md
 * §/metrics). Scrapers that only ever met the Go client's spelling break on this;
 * the simulator is there to catch that.
 */

export type PyLabels = Readonly<Record<string, string>>;

export interface PySample {
  labels: PyLabels;
  value: number;
}

export interface PyCounterSample extends PySample {
  /** Unix seconds at which the series was created. */
  created: number;
}

export interface PyHistogramSeries {
  labels: PyLabels;
  /** Upper bounds, ascending, without +Inf. */
  bounds: readonly number[];
  /** Per-bucket counts, NOT cumulative; one more than bounds (the last is above the top bound). */
  counts: ArrayLike<number>;
  sum: number;
  created: number;
}

export class PythonExposition {
  private out = '';

  gauge(name: string, help: string, samples: readonly PySample[]): this {
    this.header(name, 'gauge', help);
    for (const s of samples) this.line(name, s.labels, s.value);
    return this;
  }

  /** `name` as prometheus_client is given it, with or without `_total`. */
  counter(name: string, help: string, samples: readonly PyCounterSample[]): this {
    const base = name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
    this.header(`${base}_total`, 'counter', help);
    for (const s of samples) this.line(`${base}_total`, s.labels, s.value);
    this.header(`${base}_created`, 'gauge', help);
    for (const s of samples) this.line(`${base}_created`, s.labels, s.created);
    return this;
  }

  histogram(name: string, help: string, series: readonly PyHistogramSeries[]): this {
    this.header(name, 'histogram', help);
    for (const s of series) {
      let cumulative = 0;
      for (let i = 0; i <= s.bounds.length; i++) {
        cumulative += s.counts[i] ?? 0;
        const le = i < s.bounds.length ? floatToGoString(s.bounds[i]!) : '+Inf';
        this.line(`${name}_bucket`, { ...s.labels, le }, cumulative);
      }
      this.line(`${name}_count`, s.labels, cumulative);
      this.line(`${name}_sum`, s.labels, s.sum);
    }
    this.header(`${name}_created`, 'gauge', help);
    for (const s of series) this.line(`${name}_created`, s.labels, s.created);
    return this;
  }

  toString(): string {
    return this.out;
  }

  private header(name: string, type: string, help: string): void {
    this.out += `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} ${type}\n`;
  }

  private line(name: string, labels: PyLabels, value: number): void {
    const keys = Object.keys(labels).sort();
    let pairs = '';
    for (const k of keys) {
      if (pairs !== '') pairs += ',';
      pairs += `${k}="${labels[k]!.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`;
    }
    this.out += `${name}${pairs === '' ? '' : `{${pairs}}`} ${floatToGoString(value)}\n`;
  }
}

/**
 * prometheus_client's floatToGoString: Python's repr of the float, except that a
 * positive number with more than six digits before the point switches to an
 * exponent the way Go's formatter does (`1.048576e+06`, and `e+010` for ten digits:
 * the library pads with a literal 0).
 */
export function floatToGoString(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Number.isNaN(v)) return 'NaN';
  const s = pythonFloatRepr(v);
  const dot = s.indexOf('.');
  if (v > 0 && dot > 6) {
    const mantissa = `${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/[0.]+$/, '');
    return `${mantissa}e+0${dot - 1}`;
  }
  return s;
}

/**
 * Python's repr(float): the shortest digits that round-trip (JavaScript finds the
 * same ones), written in positional form when the decimal exponent is in -4..15 and
 * with a two-digit-minimum exponent otherwise; an integral value keeps its `.0`.
 */
export function pythonFloatRepr(v: number): string {
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const [mant, expText] = v.toExponential().split('e') as [string, string];
  const negative = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  const exp = Number(expText);
  const sign = negative ? '-' : '';
  // decpt: where the point falls relative to the digit string (Python's own term).
  const decpt = exp + 1;
  if (decpt <= -4 || decpt > 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp);
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}
