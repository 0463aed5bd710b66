/**
 * The console's height budget, line by line. Ink 6 clears the whole terminal on every
 * frame once a frame is as tall as the terminal
 * (docs/dependencies.md §Frames as tall as the terminal), so the frame is kept to
 * `rows - 1` lines by construction: every section says how many lines it takes and
 * this planner hands them out by priority. What matters most in an incident comes
 * first: alerts, the worker table (at least three rows), a serve child's crash panel,
 * the decision mix, then the diverted histogram, history charts and the log pane.
 */

export const WIDE_COLUMNS = 120;
export const MAX_HISTOGRAM_ROWS = 8;
export const MIN_CHART_LINES = 4; // title + a chart of height 2 (3 rows)
const MAX_CHART_LINES = 22;
export const DECISIONS_FULL_LINES = 6;
export const DECISIONS_COMPACT_LINES = 2;

export interface LayoutInput {
  rows: number;
  columns: number;
  /** Worker rows to show (after the filter). */
  workers: number;
  banners: number;
  /** Whether the source has cache-aware decisions / a diverted histogram at all. */
  hasDecisions: boolean;
  /** Whether there is a latency history to chart (the routers report latency). */
  hasLatency?: boolean;
  hasHistogram: boolean;
  /** Non-empty bucket rows of the diverted histogram. */
  histogramRows: number;
  /** Lines the serve child's panel wants (crash report, stopping notice); 0 without one. */
  panel: number;
  /** Log lines available to show (serve); 0 hides the pane. */
  logLines: number;
  /** The source has an event log (a router's): its newest event gets a line when no pane fits. */
  hasEvents?: boolean;
  /** The log pane shows the events themselves (top), so a pane of them replaces the one-line event. */
  logIsEvents?: boolean;
  help: boolean;
}

export interface LayoutPlan {
  /** rows - 1: the most lines a frame may have. */
  budget: number;
  wide: boolean;
  header: number;
  banners: number;
  footer: number;
  /** Lines of the help overlay (it replaces every section between header and footer). */
  help: number;
  /** Worker rows shown (or 1 for the "no workers" line). */
  tableRows: number;
  tableHeader: number;
  /** 1 when a "… N more" line follows the rows. */
  tableMore: number;
  panel: number;
  decisions: 'full' | 'compact' | 'none';
  /** Histogram: title line (0/1) plus bucket rows. */
  histogramTitle: number;
  histogramRows: number;
  /** asciichart heights (the chart takes height + 1 rows, plus a title line); 0: not drawn. */
  waitingChart: number;
  decisionChart: number;
  latencyChart: number;
  /** Log pane: lines shown (its title line is extra); 0: no pane. */
  log: number;
  /** 1: the newest event on one line, where no event pane fits. */
  lastEvent: number;
  /** Total lines the plan uses; never above `budget`. */
  used: number;
}

export function planLayout(input: LayoutInput): LayoutPlan {
  const budget = Math.max(1, Math.floor(input.rows) - 1);
  const p: LayoutPlan = {
    budget,
    wide: input.columns >= WIDE_COLUMNS,
    header: 0,
    banners: 0,
    footer: 0,
    help: 0,
    tableRows: 0,
    tableHeader: 0,
    tableMore: 0,
    panel: 0,
    decisions: 'none',
    histogramTitle: 0,
    histogramRows: 0,
    waitingChart: 0,
    decisionChart: 0,
    latencyChart: 0,
    log: 0,
    lastEvent: 0,
    used: 0,
  };
  const room = (): number => budget - planLines(p);
  /** Set a field to the largest value up to `want` that still fits. */
  const grow = (
    key:
      | 'header'
      | 'footer'
      | 'banners'
      | 'help'
      | 'tableHeader'
      | 'tableRows'
      | 'panel'
      | 'histogramTitle'
      | 'histogramRows'
      | 'log'
      | 'lastEvent',
    want: number,
  ): void => {
    // The log pane's title line comes with its first row.
    const title = key === 'log' && p.log === 0 ? 1 : 0;
    p[key] = Math.max(p[key], Math.min(Math.floor(want), p[key] + room() - title));
  };
  const attempt = (apply: () => void, undo: () => void): boolean => {
    apply();
    if (room() >= 0) return true;
    undo();
    return false;
  };

  grow('header', 2);
  grow('footer', 1);
  grow('banners', input.banners);
  if (input.help) {
    grow('help', room());
    p.used = planLines(p);
    return p;
  }

  // The table: a header and at least three rows (every row when there are fewer).
  const n = input.workers;
  grow('tableHeader', 1);
  grow('tableRows', n === 0 ? 1 : Math.min(n, 3));
  if (n > p.tableRows && room() > 0) p.tableMore = 1;
  // No line left to say so: a worker row becomes "… N more", so no worker is hidden silently.
  else if (n > p.tableRows && p.tableRows >= 2) {
    p.tableRows--;
    p.tableMore = 1;
  }
  grow('panel', input.panel);
  if (input.hasDecisions)
    attempt(
      () => (p.decisions = 'compact'),
      () => (p.decisions = 'none'),
    );

  // Every remaining worker before any chart: a hidden queue is worse than a missing chart.
  if (n > p.tableRows) {
    const free = room() + p.tableMore; // the "more" line is not needed once every row fits
    if (n - p.tableRows <= free) {
      p.tableRows = n;
      p.tableMore = 0;
    } else if (p.tableMore === 1) {
      p.tableRows += room();
    }
  }

  // What just happened outranks history: the newest event before the histogram and the charts.
  if (input.hasEvents) grow('lastEvent', 1);

  if (input.hasHistogram) {
    grow('histogramTitle', 1);
    if (p.histogramTitle > 0) grow('histogramRows', Math.min(input.histogramRows, MAX_HISTOGRAM_ROWS));
  }
  // Side by side with the histogram, the full decision table is nearly free.
  if (p.wide && p.decisions === 'compact')
    attempt(
      () => (p.decisions = 'full'),
      () => (p.decisions = 'compact'),
    );

  const wantLog = input.logLines > 0;
  if (wantLog && room() >= 12) grow('log', Math.min(input.logLines, 5));

  const r = room();
  if (r >= MIN_CHART_LINES) {
    // The queue chart first, then decisions, then latency: side by side when wide,
    // stacked otherwise, as many as get at least the minimum each.
    const others: Array<'decisionChart' | 'latencyChart'> = [
      ...(input.hasDecisions ? ['decisionChart' as const] : []),
      ...(input.hasLatency ? ['latencyChart' as const] : []),
    ];
    if (p.wide) {
      p.waitingChart = Math.min(r, MAX_CHART_LINES) - 2;
      for (const k of others) p[k] = p.waitingChart;
    } else {
      for (let n = others.length; n >= 0; n--) {
        const each = Math.min(MAX_CHART_LINES, Math.floor(r / (n + 1)));
        if (n > 0 && each < MIN_CHART_LINES) continue;
        p.waitingChart = each - 2;
        for (const k of others.slice(0, n)) p[k] = each - 2;
        break;
      }
    }
  }

  if (!p.wide && p.decisions === 'compact')
    attempt(
      () => (p.decisions = 'full'),
      () => (p.decisions = 'compact'),
    );
  if (wantLog) {
    if (p.log === 0 && room() >= 3) grow('log', Math.min(input.logLines, 10));
    else if (p.log > 0) grow('log', Math.min(input.logLines, 10));
  }
  // A pane of the events shows the newest too: its line goes to the pane.
  if (input.logIsEvents && p.log > 0 && p.lastEvent > 0) {
    p.lastEvent = 0;
    grow('log', Math.min(input.logLines, p.log + 1));
  }
  p.used = planLines(p);
  return p;
}

/** Lines the decisions + histogram block takes (side by side when wide). */
export function middleBlockLines(p: LayoutPlan): number {
  const dec = p.decisions === 'full' ? DECISIONS_FULL_LINES : p.decisions === 'compact' ? DECISIONS_COMPACT_LINES : 0;
  const hist = p.histogramTitle + p.histogramRows;
  return p.wide ? Math.max(dec, hist) : dec + hist;
}

/** Lines the charts take: each is a title plus height + 1 rows; side by side when wide. */
export function chartBlockLines(p: LayoutPlan): number {
  const lines = [p.waitingChart, p.decisionChart, p.latencyChart].map((h) => (h > 0 ? h + 2 : 0));
  return p.wide ? Math.max(...lines) : lines.reduce((a, b) => a + b, 0);
}

/** Total lines a plan draws. */
export function planLines(p: LayoutPlan): number {
  return (
    p.header +
    p.footer +
    p.banners +
    p.help +
    p.tableHeader +
    p.tableRows +
    p.tableMore +
    p.panel +
    middleBlockLines(p) +
    chartBlockLines(p) +
    (p.log > 0 ? p.log + 1 : 0) +
    p.lastEvent
  );
}
