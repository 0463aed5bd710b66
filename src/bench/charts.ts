import { plot } from 'asciichart';
import type { Color } from 'asciichart';

export interface ChartSeries {
  name: string;
  /** One value per configuration; null where a run has no figure (no successful request). */
  values: Array<number | null>;
  color: Color;
}

const LABEL_WIDTH = 10;

/**
 * A step chart over configurations: each configuration gets a band of columns under
 * its letter, so two configurations read as clearly as a twelve-point sweep. Series
 * are told apart by colour and by a legend; without colour the legend lists them in
 * the order the lines stack (the p99 line above p90 above p50 for latencies).
 */
export function configurationChart(opts: {
  title: string;
  letters: readonly string[];
  series: readonly ChartSeries[];
  unit: string;
  color: boolean;
  width?: number;
  height?: number;
  min?: number;
  max?: number;
}): string {
  const n = opts.letters.length;
  const band = Math.max(3, Math.min(12, Math.floor((opts.width ?? 64) / Math.max(1, n))));
  const drawable = opts.series.filter((s) => s.values.some((v) => v !== null));
  if (n === 0 || drawable.length === 0) return `${opts.title}: no data\n`;
  // asciichart has no gaps: a missing point repeats its neighbour so the line stays readable, and the table shows the truth.
  const lines = drawable.map((s) => stretch(fillGaps(s.values), band));
  const all = lines.flat();
  const min = opts.min ?? Math.min(...all);
  const max = opts.max ?? Math.max(...all);
  const chart = plot(lines, {
    height: opts.height ?? 8,
    min,
    max: max === min ? min + 1 : max,
    colors: opts.color ? drawable.map((s) => s.color) : undefined,
    format: (x) => formatAxis(x).padStart(LABEL_WIDTH),
  });
  const axisPad = ' '.repeat(LABEL_WIDTH + 2);
  const letters = opts.letters.map((l) => centre(l, band)).join('');
  const legend = drawable.map((s) => (opts.color ? `${s.color}──${'\u001b[0m'} ${s.name}` : `${s.name}`)).join('   ');
  return `${opts.title} (${opts.unit})   ${opts.color ? legend : `lines: ${legend}`}\n${chart}\n${axisPad}${letters}\n`;
}

function stretch(values: readonly number[], band: number): number[] {
  return values.flatMap((v) => new Array<number>(band).fill(v));
}

function fillGaps(values: ReadonlyArray<number | null>): number[] {
  const firstKnown = values.find((v): v is number => v !== null) ?? 0;
  let last = firstKnown;
  return values.map((v) => (v === null ? last : (last = v)));
}

function centre(text: string, width: number): string {
  const left = Math.floor((width - text.length) / 2);
  return `${' '.repeat(Math.max(0, left))}${text}`.padEnd(width);
}

function formatAxis(x: number): string {
  const a = Math.abs(x);
  if (a >= 10_000) return `${(x / 1000).toFixed(0)}k`;
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  return x.toFixed(2);
}
