import { describe, expect, it } from 'vitest';
import { axisFor, chartLines, exactOnChart } from '../../src/tui/chart.js';
import {
  HistoryBuffers,
  NO_LATCH,
  RingBuffer,
  bannersFor,
  initialUiState,
  nextLatch,
  planLayout,
  planLines,
  reduceKey,
  sampleOf,
} from '../../src/tui/index.js';
import type { ConsoleUiState, KeyInfo } from '../../src/tui/index.js';
import { planColumns } from '../../src/tui/table-columns.js';
import { adminDoc, viewOf } from './fixtures.js';

describe('planLayout', () => {
  it('never plans more than rows - 1 lines, whatever the terminal and the data', () => {
    const bad: unknown[] = [];
    for (let rows = 1; rows <= 70; rows++) {
      for (const columns of [40, 80, 100, 119, 120, 200]) {
        for (const workers of [0, 1, 3, 4, 12, 64]) {
          for (const banners of [0, 2]) {
            for (const histogramRows of [0, 3, 14]) {
              for (const [panel, logLines, help] of [
                [0, 0, false],
                [14, 40, false],
                [1, 3, false],
                [0, 0, true],
              ] as const) {
                const plan = planLayout({
                  rows,
                  columns,
                  workers,
                  banners,
                  hasDecisions: true,
                  hasHistogram: true,
                  histogramRows,
                  panel,
                  logLines,
                  help,
                });
                if (plan.used !== planLines(plan) || plan.used > Math.max(1, rows - 1))
                  bad.push({ rows, columns, workers, banners, histogramRows, panel, used: plan.used });
              }
            }
          }
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('at 80×24 with four workers shows the header, every worker, the decisions, the histogram and a chart', () => {
    const plan = planLayout({
      rows: 24,
      columns: 80,
      workers: 4,
      banners: 1,
      hasDecisions: true,
      hasHistogram: true,
      histogramRows: 3,
      panel: 0,
      logLines: 0,
      help: false,
    });
    expect(plan).toMatchObject({
      header: 2,
      banners: 1,
      footer: 1,
      tableHeader: 1,
      tableRows: 4,
      tableMore: 0,
      decisions: 'compact',
      histogramTitle: 1,
      histogramRows: 3,
    });
    expect(plan.waitingChart).toBeGreaterThanOrEqual(2);
    expect(plan.used).toBe(23);
  });

  it('gives workers priority over charts, and keeps a "more" line when they do not all fit', () => {
    const plan = planLayout({
      rows: 24,
      columns: 80,
      workers: 40,
      banners: 0,
      hasDecisions: true,
      hasHistogram: true,
      histogramRows: 3,
      panel: 0,
      logLines: 0,
      help: false,
    });
    expect(plan.tableMore).toBe(1);
    expect(plan.tableRows).toBe(23 - 2 - 1 - 1 - 2 - 1);
    expect(plan.waitingChart).toBe(0);
  });

  it.each([6, 7, 8, 9, 10])('at %i rows, workers that do not fit are counted on a "more" line, never hidden silently', (rows) => {
    for (const banners of [0, 2]) {
      const plan = planLayout({
        rows,
        columns: 80,
        workers: 12,
        banners,
        hasDecisions: true,
        hasHistogram: true,
        histogramRows: 3,
        panel: 0,
        logLines: 0,
        help: false,
      });
      if (plan.tableRows >= 1 && plan.tableRows < 12)
        expect(plan.tableMore + (plan.tableRows === 1 ? 1 : 0), `rows ${rows}, banners ${banners}`).toBeGreaterThanOrEqual(1);
      expect(plan.used).toBeLessThanOrEqual(rows - 1);
    }
  });

  it('at 80×24 the newest event gets a line before the histogram and the charts; a pane of events takes it over where one fits', () => {
    const small = planLayout({
      rows: 24,
      columns: 80,
      workers: 4,
      banners: 1,
      hasDecisions: true,
      hasHistogram: true,
      histogramRows: 3,
      panel: 0,
      logLines: 30,
      help: false,
      hasEvents: true,
      logIsEvents: true,
    });
    expect(small).toMatchObject({ lastEvent: 1, tableRows: 4, decisions: 'compact', log: 0 });
    expect(small.used).toBe(23);
    // serve: its log pane is not the events, so the line stays beside it.
    const serve = planLayout({
      rows: 60,
      columns: 200,
      workers: 4,
      banners: 0,
      hasDecisions: true,
      hasHistogram: true,
      histogramRows: 3,
      panel: 0,
      logLines: 30,
      help: false,
      hasEvents: true,
      logIsEvents: false,
    });
    expect(serve.lastEvent).toBe(1);
    expect(serve.log).toBeGreaterThan(0);
    const top = planLayout({
      rows: 60,
      columns: 200,
      workers: 4,
      banners: 0,
      hasDecisions: true,
      hasHistogram: true,
      histogramRows: 3,
      panel: 0,
      logLines: 30,
      help: false,
      hasEvents: true,
      logIsEvents: true,
    });
    expect(top.lastEvent).toBe(0);
    expect(top.log).toBeGreaterThan(0);
    expect(top.used).toBeLessThanOrEqual(59);
    // Workers still come first: at 8 rows with 4 workers there is no event line.
    const tiny = planLayout({
      rows: 8,
      columns: 80,
      workers: 4,
      banners: 0,
      hasDecisions: true,
      hasHistogram: true,
      histogramRows: 3,
      panel: 0,
      logLines: 30,
      help: false,
      hasEvents: true,
      logIsEvents: true,
    });
    expect(tiny.tableRows + tiny.tableMore).toBeGreaterThanOrEqual(3);
    expect(tiny.used).toBeLessThanOrEqual(7);
  });

  it('puts the serve crash panel right after the table', () => {
    const plan = planLayout({
      rows: 24,
      columns: 80,
      workers: 4,
      banners: 0,
      hasDecisions: true,
      hasHistogram: true,
      histogramRows: 3,
      panel: 14,
      logLines: 40,
      help: false,
    });
    expect(plan.panel).toBe(14);
    expect(plan.tableRows).toBe(4);
  });
});

describe('chartLines', () => {
  it('draws exactly height + 1 lines no wider than asked, from empty, flat and long series', () => {
    for (const series of [
      [[]],
      [[0, 0, 0]],
      [[5]],
      [Array.from({ length: 500 }, (_, i) => i % 17)],
      [
        [1, 2],
        [3, 4],
        [6, 6],
      ],
    ]) {
      for (const [height, width] of [
        [2, 20],
        [5, 80],
        [12, 57],
      ]) {
        const lines = chartLines(series, { height, width, color: false, colors: [] });
        expect(lines).toHaveLength(height + 1);
        for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
      }
    }
  });

  it('without colour, each series draws in its own mark; a later series wins a shared cell; the width holds', () => {
    const busiest = [0, 2, 4, 6, 8, 8, 8];
    const idlest = [0, 0, 0, 1, 1, 1, 1];
    const limit = [6, 6, 6, 6, 6, 6, 6];
    for (const [height, width] of [
      [3, 20],
      [8, 60],
    ]) {
      const lines = chartLines([limit, idlest, busiest], { height, width, color: false, colors: [], marks: ['-', 'o', '#'] });
      const plot = lines.map((l) => l.slice(Math.max(l.indexOf('┤'), l.indexOf('┼')) + 1)).join('');
      expect(plot).toMatch(/#/);
      expect(plot).toMatch(/o/);
      expect(plot).toMatch(/-/);
      expect(plot).not.toMatch(/[╭╮╰╯─│]/);
      expect(lines).toHaveLength(height + 1);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
    }
    // With colour, the line glyphs stay and colours tell the series apart.
    expect(
      chartLines([busiest, idlest], { height: 3, width: 30, color: true, colors: ['\u001b[31m', '\u001b[32m'], marks: ['#', 'o'] }).join(
        '',
      ),
    ).not.toMatch(/#/);
  });

  it.each([2, 3, 4, 7, 12])('puts the queue limit exactly on a labelled row at height %i, or leaves it out', (height) => {
    for (const peak of [3, 6, 7, 9, 15, 40]) {
      const axis = axisFor(Math.max(6, peak), height, 6);
      const lines = chartLines(
        [
          [6, 6, 6],
          [0, 1, peak],
        ],
        { height, width: 40, color: false, colors: [], include: [6], exact: 6, exactSeries: 0, marks: ['-', '#'] },
      );
      const labels = lines.map((l) => l.slice(0, l.search(/[┤┼]/)).trim());
      const plot = lines.map((l) => l.slice(l.search(/[┤┼]/) + 1)).join('');
      if (axis.exactRow !== null) {
        expect(labels, `peak ${peak}`).toContain(axis.max < 10 ? '6.0' : '6');
        // The limit's row, counted from the bottom, is the one labelled 6.
        expect(labels[height - axis.exactRow]).toBe(axis.max < 10 ? '6.0' : '6');
        expect(axis.max).toBeGreaterThanOrEqual(peak);
        expect(plot).toContain('#');
      } else {
        // No row can be 6 without cutting the peak: the limit line is left out, not drawn a row off.
        expect(peak).toBeGreaterThan(6 * height);
        expect(plot).not.toContain('-');
      }
    }
  });

  it('says whether the limit is drawn exactly as chartLines draws it, an old peak out of view included', () => {
    const oldPeak = [90, ...new Array<number>(100).fill(2)]; // the 90 is further back than a 40-column chart shows
    for (const [series, height] of [
      [oldPeak, 3],
      [[1, 50, 2], 3],
      [[1, 4, 2], 3],
      [[1, 9, 7], 8],
    ] as Array<[number[], number]>) {
      const o = { height, width: 40, color: false, colors: [], include: [6], exact: 6, exactSeries: 0, marks: ['-', '#'] };
      const limitLine = new Array<number>(series.length).fill(6);
      const drawn = chartLines([limitLine, series], o).some((l) => l.slice(l.search(/[┤┼]/) + 1).includes('-'));
      expect(exactOnChart([limitLine, series], o), JSON.stringify(series.slice(0, 3))).toBe(drawn);
    }
    expect(
      exactOnChart([new Array<number>(101).fill(6), oldPeak], {
        height: 3,
        width: 40,
        color: false,
        colors: [],
        include: [6],
        exact: 6,
        exactSeries: 0,
      }),
    ).toBe(true);
  });

  it('passes colours to asciichart only when colour is on', () => {
    expect(chartLines([[1, 5, 2]], { height: 3, width: 30, color: false, colors: ['\u001b[31m'] }).join('')).not.toMatch(/\u001b/);
    expect(chartLines([[1, 5, 2]], { height: 3, width: 30, color: true, colors: ['\u001b[31m'] }).join('')).toMatch(/\u001b\[31m/);
  });
});

describe('RingBuffer and history', () => {
  it('keeps the newest values, oldest first', () => {
    const r = new RingBuffer<number>(3);
    for (let i = 1; i <= 5; i++) r.push(i);
    expect(r.toArray()).toEqual([3, 4, 5]);
    expect(r.toArray(2)).toEqual([4, 5]);
    expect(r.last()).toBe(5);
    expect(() => new RingBuffer(0)).toThrow();
  });

  it('records queues per snapshot and decision rates only once they exist', () => {
    const h = new HistoryBuffers(10);
    const v = viewOf(
      adminDoc({
        workers: [
          { url: 'http://a:1', waiting: 7 },
          { url: 'http://b:1', waiting: 1 },
        ],
      }),
    );
    h.push(sampleOf(v));
    const s = h.series();
    expect(s.waitingMax).toEqual([7]);
    expect(s.waitingMin).toEqual([1]);
    expect(s.limit).toEqual([6]);
    expect(s.hit).toEqual([]);
  });
});

describe('keys', () => {
  const press = (s: ConsoleUiState, input: string, key: KeyInfo = {}) => reduceKey(s, input, key);

  it('q and Ctrl-C quit; p and space pause; s cycles the sort; ? toggles help', () => {
    const s = initialUiState();
    expect(press(s, 'q').quit).toBe(true);
    expect(press(s, 'c', { ctrl: true }).quit).toBe(true);
    expect(press(s, 'p').state.paused).toBe(true);
    expect(press(press(s, 'p').state, ' ').state.paused).toBe(false);
    expect(press(s, 's').state.sort).toBe('rejections');
    const help = press(s, '?').state;
    expect(help.mode).toBe('help');
    expect(press(help, 'x').state.mode).toBe('normal');
    expect(press(help, 'q').quit).toBe(true);
  });

  it('/ edits a filter that applies while typing; Enter keeps it, Esc clears it; q is a letter there', () => {
    let s = press(initialUiState(), '/').state;
    expect(s.mode).toBe('filter');
    for (const ch of 'w1q') s = press(s, ch).state;
    expect(s.draft).toBe('w1q');
    s = press(s, '', { backspace: true }).state;
    expect(s.draft).toBe('w1');
    const kept = press(s, '\r', { return: true }).state;
    expect(kept).toMatchObject({ mode: 'normal', filter: 'w1' });
    expect(press(s, '', { escape: true }).state).toMatchObject({ mode: 'normal', filter: '' });
    expect(press(kept, '', { escape: true }).state.filter).toBe('');
    expect(press(s, 'c', { ctrl: true }).quit).toBe(true);
  });
});

describe('alerts', () => {
  it('latches all_queued episodes and says when one cleared', () => {
    const on = viewOf(adminDoc({ allQueued: true }));
    const off = viewOf(adminDoc({ allQueued: false }));
    let latch = nextLatch(NO_LATCH, on, 1000);
    latch = nextLatch(latch, on, 3000);
    expect(latch).toMatchObject({ active: true, since: 1000, lastSeen: 3000, episodes: 1 });
    expect(bannersFor(on, latch, 3000)[0]!.text).toMatch(/FLEET SATURATED.*for 2\.0s/);
    latch = nextLatch(latch, off, 4000);
    expect(bannersFor(off, latch, 13_000)[0]!.text).toMatch(/all_queued cleared 10\.0s ago \(1 episode/);
    expect(bannersFor(off, latch, 3000 + 61_000)).toEqual([]);
    latch = nextLatch(latch, on, 70_000);
    expect(latch.episodes).toBe(2);
  });

  it('raises a gate-inert banner', () => {
    const v = viewOf(adminDoc({ gateInert: true }));
    expect(
      bannersFor(v, NO_LATCH, 0)
        .map((b) => b.text)
        .join(),
    ).toMatch(/GATE INERT/);
  });
});

describe('table columns', () => {
  it('fit the width, dropping the least telling columns first but never waiting or gated', () => {
    const v = viewOf(adminDoc());
    for (const width of [40, 60, 80, 100, 160]) {
      const cols = planColumns({ width, workers: v.workers, limit: 6, replicas: 2 });
      const used = cols.reduce((a, c) => a + c.width, 0) + cols.length - 1;
      expect(used).toBeLessThanOrEqual(Math.max(width, 40));
      expect(cols.map((c) => c.id)).toEqual(expect.arrayContaining(['worker', 'waiting', 'gated']));
    }
  });
});

describe('reduceKey: selection and the worker detail', () => {
  const order = ['http://a:1', 'http://b:1', 'http://c:1'];
  const down = { downArrow: true };
  const up = { upArrow: true };
  type Step = [string, string, KeyInfo];
  /** [case, keys, selected after, mode after] */
  const table: Array<[string, Step[], string | null, string]> = [
    ['j selects the first', [['j', 'j', {}]], 'http://a:1', 'normal'],
    [
      '↓ twice, the second',
      [
        ['↓', '', down],
        ['↓', '', down],
      ],
      'http://b:1',
      'normal',
    ],
    ['↑ from none, the last', [['↑', '', up]], 'http://c:1', 'normal'],
    [
      'k stops at the top',
      [
        ['j', 'j', {}],
        ['k', 'k', {}],
        ['k', 'k', {}],
      ],
      'http://a:1',
      'normal',
    ],
    [
      'j stops at the bottom',
      [
        ['j', 'j', {}],
        ['j', 'j', {}],
        ['j', 'j', {}],
        ['j', 'j', {}],
      ],
      'http://c:1',
      'normal',
    ],
    ['Enter with none selected opens the first', [['Enter', '', { return: true }]], 'http://a:1', 'detail'],
    [
      'Enter opens the selected',
      [
        ['j', 'j', {}],
        ['j', 'j', {}],
        ['Enter', '', { return: true }],
      ],
      'http://b:1',
      'detail',
    ],
    [
      '↓ in the detail moves to the next',
      [
        ['Enter', '', { return: true }],
        ['↓', '', down],
      ],
      'http://b:1',
      'detail',
    ],
    [
      'Esc leaves the detail, keeps the selection',
      [
        ['Enter', '', { return: true }],
        ['Esc', '', { escape: true }],
      ],
      'http://a:1',
      'normal',
    ],
    [
      'Esc again drops the selection',
      [
        ['Enter', '', { return: true }],
        ['Esc', '', { escape: true }],
        ['Esc', '', { escape: true }],
      ],
      null,
      'normal',
    ],
    [
      'h and ← leave the detail too',
      [
        ['Enter', '', { return: true }],
        ['h', 'h', {}],
      ],
      'http://a:1',
      'normal',
    ],
  ];
  it.each(table)('%s', (_name, steps, selected, mode) => {
    let s = initialUiState();
    for (const [, input, key] of steps) s = reduceKey(s, input, key, order).state;
    expect(s.selected).toBe(selected);
    expect(s.mode).toBe(mode);
  });

  it('with no workers there is nothing to select or open; q still quits from the detail', () => {
    expect(reduceKey(initialUiState(), 'j', {}, []).state.selected).toBeNull();
    expect(reduceKey(initialUiState(), '', { return: true }, []).state.mode).toBe('normal');
    const detail = reduceKey(initialUiState(), '', { return: true }, order).state;
    expect(reduceKey(detail, 'q', {}, order).quit).toBe(true);
  });
});

describe('the latency chart', () => {
  const base = {
    banners: 0,
    hasDecisions: true,
    hasHistogram: true,
    histogramRows: 3,
    panel: 0,
    logLines: 0,
    help: false,
    hasLatency: true,
  } as const;
  it('wide: beside the queue and decision charts, the same height', () => {
    const p = planLayout({ ...base, rows: 60, columns: 200, workers: 4 });
    expect(p.latencyChart).toBeGreaterThan(0);
    expect(p.latencyChart).toBe(p.waitingChart);
    expect(p.decisionChart).toBe(p.waitingChart);
    expect(p.used).toBeLessThanOrEqual(59);
  });
  it('stacked: a third chart only when each of the three gets the minimum; at 80×24 the queue chart keeps its room', () => {
    const tall = planLayout({ ...base, rows: 50, columns: 100, workers: 4 });
    expect(tall.latencyChart).toBeGreaterThanOrEqual(2);
    expect(tall.used).toBeLessThanOrEqual(49);
    const small = planLayout({ ...base, rows: 24, columns: 80, workers: 4 });
    expect(small.latencyChart).toBe(0);
    expect(small.waitingChart).toBeGreaterThanOrEqual(2);
  });
  it('the history keeps latency in milliseconds, only for samples that had a figure', () => {
    const h = new HistoryBuffers(8);
    const sample = (p50: number | null) => ({
      waitingMax: 1,
      waitingMin: 0,
      limit: 6,
      inflight: 1,
      decisionsPerS: null,
      e2eP50: p50,
      e2eP99: p50 === null ? null : p50 * 3,
      ttftP50: null,
      byWorker: [],
    });
    for (const v of [0.2, null, 0.25]) h.push(sample(v));
    const s = h.series();
    expect(s.e2eP50Ms).toEqual([200, 250]);
    expect(s.e2eP99Ms).toEqual([600, 750]);
    expect(s.ttftP50Ms).toEqual([0, 0]);
  });
});
