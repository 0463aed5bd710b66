import asciichart from 'asciichart';

export const CHART_LABEL_WIDTH = 6;

/** How many of a series' newest points a chart `width` columns wide draws. */
export const pointsThatFit = (width: number): number => Math.max(1, width - CHART_LABEL_WIDTH - 1);

export interface ChartOptions {
  /** asciichart height: the chart is height + 1 rows. */
  height: number;
  /** Columns available, labels included. */
  width: number;
  /** ANSI colours per series, used only when `color` is true. */
  colors: string[];
  color: boolean;
  /** Values the y axis must include besides the data (e.g. the queue limit). */
  include?: number[];
  /**
   * One character per series, drawn instead of the line glyphs when there is no colour:
   * without it every series looks the same. The title's legend names them.
   */
  marks?: string[];
  /**
   * A value that must fall exactly on a row, labelled with itself (the queue limit): at
   * a few rows an evenly divided axis would draw it a row off and label it wrongly.
   * `exactSeries` is the series that draws it: when the data is too far above it for
   * any row to be it, that series is left out rather than drawn on a wrong row.
   */
  exact?: number;
  exactSeries?: number;
}

/**
 * asciichart as an array of exactly `height + 1` lines, none wider than `width`.
 * asciichart's width is the number of points, so the series are cut to the newest
 * points that fit; it throws on an empty series and collapses a flat one to a single
 * row, so the y range is pinned to [0, max(data, include, 1)], which also keeps the
 * row count fixed. Colours are raw escapes that ignore NO_COLOR: passed only when the
 * console may colour.
 */
export function chartLines(series: number[][], o: ChartOptions): string[] {
  const rows = o.height + 1;
  const { cut, axis } = plotted(series, o);
  if (cut.length === 0 || o.height < 1)
    return Array.from({ length: rows }, (_, i) => (i === Math.floor(rows / 2) ? ' '.repeat(CHART_LABEL_WIDTH) + ' collecting…' : ''));
  const max = axis.max;
  if (o.exact !== undefined && axis.exactRow === null && o.exactSeries !== undefined) {
    cut.splice(o.exactSeries, 1);
    o = { ...o, colors: o.colors.filter((_, i) => i !== o.exactSeries), marks: o.marks?.filter((_, i) => i !== o.exactSeries) };
  }
  const format = (x: number): string => (max < 10 ? x.toFixed(1) : fmtAxis(x)).padStart(CHART_LABEL_WIDTH).slice(-CHART_LABEL_WIDTH);
  const text = asciichart.plot(cut, {
    height: o.height,
    min: 0,
    max,
    offset: 2,
    format,
    ...(o.color ? { colors: o.colors } : {}),
  });
  let lines = text.split('\n');
  if (!o.color && o.marks && cut.length > 1)
    lines = marked(cut, o.marks, lines, (one) => asciichart.plot([one], { height: o.height, min: 0, max, offset: 2, format }).split('\n'));
  // Pinned min/max make asciichart draw exactly height + 1 rows; hold it to that regardless.
  while (lines.length < rows) lines.push('');
  return lines.slice(0, rows);
}

/** The points that fit the width (newest), and the axis they are drawn on. */
function plotted(series: number[][], o: ChartOptions): { cut: number[][]; axis: { max: number; exactRow: number | null } } {
  const points = pointsThatFit(o.width);
  const cut = series.map((s) => s.slice(-points).map((v) => (Number.isFinite(v) && v > 0 ? v : 0))).filter((s) => s.length > 0);
  return { cut, axis: axisFor(Math.max(1, ...(o.include ?? []).filter(Number.isFinite), ...cut.flat()), o.height, o.exact) };
}

/**
 * Whether chartLines with these options draws `exact` on a row (false: the data in
 * view is too far above it, and `exactSeries` is left out), so a title can say so.
 */
export function exactOnChart(series: number[][], o: ChartOptions): boolean {
  return plotted(series, o).axis.exactRow !== null;
}

/**
 * The top of the axis: the data's maximum, raised where needed so that `exact` sits on
 * a row. Rows stand for max × r / height; the highest row r ≤ height that keeps
 * max ≥ the data puts `exact` at r, so max = exact × height / r. When even row 1
 * would need an axis below the data, no row can be `exact` (exactRow null).
 */
export function axisFor(dataMax: number, height: number, exact: number | undefined): { max: number; exactRow: number | null } {
  if (exact === undefined || !(exact > 0) || height < 1) return { max: dataMax, exactRow: null };
  const r = Math.min(height, Math.floor((height * exact) / dataMax));
  if (r < 1) return { max: dataMax, exactRow: null };
  return { max: (exact * height) / r, exactRow: r };
}

/**
 * The chart with each series in its own character: every series is plotted alone on
 * the same axes, and each cell of the plot area takes the mark of the last series
 * (in the order given) that draws there, as asciichart draws later series over
 * earlier ones. The axis and its labels stay as drawn.
 */
function marked(series: number[][], marks: string[], axes: string[], plotOne: (s: number[]) => string[]): string[] {
  const plots = series.map((s) => plotOne(s));
  return axes.map((line, row) => {
    const axis = Math.max(line.indexOf('┤'), line.indexOf('┼'));
    if (axis < 0) return line;
    let out = line.slice(0, axis + 1);
    const width = Math.max(...plots.map((p) => (p[row] ?? '').length));
    for (let col = axis + 1; col < width; col++) {
      const k = plots.findLastIndex((p) => (p[row]?.[col] ?? ' ') !== ' ');
      out += k < 0 ? ' ' : (marks[k] ?? '*');
    }
    return out;
  });
}

function fmtAxis(x: number): string {
  if (x >= 10_000) return `${(x / 1000).toFixed(0)}k`;
  return x.toFixed(0);
}

export const CHART_COLORS = {
  red: asciichart.red,
  yellow: asciichart.yellow,
  green: asciichart.green,
  cyan: asciichart.cyan,
  magenta: asciichart.magenta,
  blue: asciichart.blue,
  gray: asciichart.darkgray,
};
