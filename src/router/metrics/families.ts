import { labelPairs } from '../../prometheus/index.js';
import type { HistogramSeries, Sample } from '../../prometheus/index.js';
import { SeriesIndex } from './series-index.js';

/** A counter series held by its booker: adding to `value` is booking. */
export interface CounterCell {
  value: number;
}

/** A histogram series held by its booker, for HistogramFamily.observeIn. */
export interface HistogramCell {
  readonly count: number;
}

/**
 * Label-keyed counters and histograms rendered at scrape time. Series appear on
 * first use (as in the reference router), except those a caller pre-creates with
 * `touch`, so dashboards see zeros rather than gaps for the labels that matter.
 */
export class CounterFamily {
  private readonly series: SeriesIndex<{ labels: string[]; pairs: string; value: number }>;
  /** The series in exposition order, kept until a series is added or dropped. */
  private sorted: Array<{ labels: string[]; pairs: string; value: number }> | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    this.series = new SeriesIndex(labelNames.length);
  }

  inc(labels: readonly string[], by = 1): void {
    const s = this.series.get(labels);
    if (s) s.value += by;
    else this.#create(labels, by);
  }

  /**
   * One series to add to directly, created (at 0) if it is new: for a caller that books
   * the same labels on every request and keeps the series (a worker's own, in
   * worker-bookings.ts). A series this family later forgets stays the caller's, out of
   * the output.
   */
  cell(labels: readonly string[]): CounterCell {
    return this.series.get(labels) ?? this.#create(labels, 0);
  }

  #create(labels: readonly string[], value: number): { labels: string[]; pairs: string; value: number } {
    this.sorted = undefined;
    return this.series.create(labels, (own) => ({ labels: own, pairs: labelPairs(zip(this.labelNames, own)), value }));
  }

  touch(labels: readonly string[]): void {
    this.inc(labels, 0);
  }

  get(labels: readonly string[]): number {
    return this.series.get(labels)?.value ?? 0;
  }

  /** Sum over series whose label `name` has `value` (all series when name is omitted). */
  sum(name?: string, value?: string): number {
    const i = name === undefined ? -1 : this.labelNames.indexOf(name);
    let total = 0;
    for (const s of this.series.values()) if (i < 0 || s.labels[i] === value) total += s.value;
    return total;
  }

  /** Drop the series whose label `name` is `value`. */
  forget(name: string, value: string): void {
    const at = this.labelNames.indexOf(name);
    if (at >= 0) this.series.forget(at, value);
    this.sorted = undefined;
  }

  forEach(fn: (labels: readonly string[], value: number) => void): void {
    for (const s of this.series.values()) fn(s.labels, s.value);
  }

  /** The series sorted by labels, as the reference router renders them; the order and the rendered labels are kept between scrapes. */
  samples(): Sample[] {
    this.sorted ??= sortByLabels([...this.series.values()]);
    return this.sorted.map((s) => ({ pairs: s.pairs, value: s.value }));
  }
}

export class HistogramFamily {
  private readonly series: SeriesIndex<{ labels: string[]; pairs: string; counts: Float64Array; sum: number; count: number }>;
  private sorted: Array<{ labels: string[]; pairs: string; counts: Float64Array; sum: number; count: number }> | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    this.series = new SeriesIndex(labelNames.length);
  }

  /** An observation goes into the first bucket whose bound is ≥ the value; non-finite ones are dropped. */
  observe(labels: readonly string[], value: number): void {
    if (Number.isFinite(value)) this.observeIn(this.entry(labels), value);
  }

  /** One series to observe into with `observeIn`, created if it is new (as CounterFamily.cell). */
  cell(labels: readonly string[]): HistogramCell {
    return this.entry(labels);
  }

  observeIn(cell: HistogramCell, value: number): void {
    if (!Number.isFinite(value)) return;
    const s = cell as { counts: Float64Array; sum: number; count: number };
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  touch(labels: readonly string[]): void {
    this.entry(labels);
  }

  /** Drop the series whose label `name` is `value`. */
  forget(name: string, value: string): void {
    const at = this.labelNames.indexOf(name);
    if (at >= 0) this.series.forget(at, value);
    this.sorted = undefined;
  }

  /** Observations in one series (0 without one): every observation moves it, so an unchanged count means an unchanged snapshot. */
  count(labels: readonly string[]): number {
    return this.series.get(labels)?.count ?? 0;
  }

  /** Cumulative buckets of one series, for the admin state. */
  snapshot(labels: readonly string[]): { buckets: Array<{ le: number; count: number }>; count: number; sum: number } {
    const s = this.series.get(labels);
    const buckets: Array<{ le: number; count: number }> = [];
    let acc = 0;
    this.bounds.forEach((le, i) => {
      acc += s ? s.counts[i]! : 0;
      buckets.push({ le, count: acc });
    });
    return { buckets, count: s?.count ?? 0, sum: s?.sum ?? 0 };
  }

  /** One series as it stands now, copied: what is written from it later is what it held now. */
  reading(labels: readonly string[]): HistogramReading {
    const s = this.series.get(labels);
    this.#heads ??= this.bounds.map((le, i) => `${i > 0 ? ',' : ''}{"le":${JSON.stringify(le)},"count":`);
    return new HistogramReading(
      this.bounds,
      this.#heads,
      s ? s.counts.slice() : new Float64Array(this.bounds.length + 1),
      s?.count ?? 0,
      s?.sum ?? 0,
    );
  }

  #heads: string[] | undefined;

  samples(): HistogramSeries[] {
    this.sorted ??= sortByLabels([...this.series.values()]);
    return this.sorted.map((s) => ({
      pairs: s.pairs,
      bounds: this.bounds,
      counts: s.counts,
      sum: s.sum,
    }));
  }

  private entry(labels: readonly string[]) {
    const s = this.series.get(labels);
    if (s) return s;
    this.sorted = undefined;
    return this.series.create(labels, (own) => ({
      labels: own,
      pairs: labelPairs(zip(this.labelNames, own)),
      counts: new Float64Array(this.bounds.length + 1),
      sum: 0,
      count: 0,
    }));
  }
}

function zip(names: readonly string[], values: readonly string[]): Record<string, string> {
  const o: Record<string, string> = {};
  names.forEach((n, i) => (o[n] = values[i] ?? ''));
  return o;
}

/** Output sorted by label tuple, as the reference router renders it. */
function sortByLabels<T extends { labels: string[] }>(list: T[]): T[] {
  return list.sort((a, b) => {
    for (let i = 0; i < a.labels.length; i++) {
      const c = a.labels[i]! < b.labels[i]! ? -1 : a.labels[i]! > b.labels[i]! ? 1 : 0;
      if (c !== 0) return c;
    }
    return 0;
  });
}

/** A histogram series copied at one moment (HistogramFamily.reading). */
export class HistogramReading {
  constructor(
    /** The buckets' upper bounds; the +Inf bucket is the last count. */
    readonly bounds: readonly number[],
    /** Each bucket's JSON up to its count. */
    private readonly heads: readonly string[],
    /** Observations per bucket (not cumulative), the +Inf bucket last: what a stream delta compares. */
    readonly counts: Float64Array,
    readonly count: number,
    readonly sum: number,
  ) {}

  /** Cumulative buckets, as the admin state holds them. */
  snapshot(): { buckets: Array<{ le: number; count: number }>; count: number; sum: number } {
    const buckets: Array<{ le: number; count: number }> = [];
    let acc = 0;
    this.bounds.forEach((le, i) => {
      acc += this.counts[i]!;
      buckets.push({ le, count: acc });
    });
    return { buckets, count: this.count, sum: this.sum };
  }

  /** What JSON.stringify(snapshot()) writes, written without building the buckets: a document of thousands of workers writes one for every worker that took a request. */
  json(): string {
    let out = '{"buckets":[';
    let acc = 0;
    for (let i = 0; i < this.heads.length; i++) {
      acc += this.counts[i]!;
      out += `${this.heads[i]!}${acc}}`;
    }
    return `${out}],"count":${this.count},"sum":${JSON.stringify(this.sum)}}`;
  }
}
