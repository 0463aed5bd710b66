import { Box } from 'ink';
import type { ReactElement } from 'react';
import { bucketCounts, fmtQuantileSeconds, nonEmptySpan } from '../../fleet/index.js';
import { shownWorkers } from '../../fleet/index.js';
import type { FleetView } from '../../fleet/index.js';
import type { AlertLatch } from '../banners.js';
import { bannersFor } from '../banners.js';
import { CHART_COLORS, chartLines, exactOnChart, pointsThatFit } from '../chart.js';
import type { ChartOptions } from '../chart.js';
import type { ChildState } from '../child-state.js';
import { useColor } from '../color-context.js';
import type { HistorySeries } from '../history.js';
import { activeFilter } from '../keymap.js';
import type { ConsoleUiState } from '../keymap.js';
import { planLayout } from '../layout.js';
import type { TerminalSize } from '../hooks/use-terminal-size.js';
import { AlertBanner } from './AlertBanner.js';
import { ChildPanel, childPanelLines } from './ChildPanel.js';
import { DecisionMix } from './DecisionMix.js';
import { DivertedHistogram } from './DivertedHistogram.js';
import { Footer } from './Footer.js';
import { Header } from './Header.js';
import { HelpOverlay } from './HelpOverlay.js';
import { EventPane, LastEvent } from './EventPane.js';
import { HistoryChart } from './HistoryChart.js';
import type { SegmentInput } from './Line.js';
import { LogPane } from './LogPane.js';
import { WorkerDetail } from './WorkerDetail.js';
import { WorkerTable } from './WorkerTable.js';

export interface ConsoleProps {
  view: FleetView | undefined;
  history: HistorySeries;
  ui: ConsoleUiState;
  /** How long the view has been paused (the frame on screen is that old); undefined when live. */
  pausedForMs?: number;
  size: TerminalSize;
  now: number;
  latch: AlertLatch;
  title: string;
  target: string;
  intervalMs: number;
  /** Tokens per prefix block when the router does not report it. */
  blockSize: number;
  child?: ChildState | undefined;
}

/**
 * The whole frame, from data alone. Its height is fixed at rows - 1 (planLayout), the
 * root box clips anything that would still spill, and every line is cut at the right
 * edge, so the frame never reaches the terminal's height whatever the data.
 */
export function Console(p: ConsoleProps): ReactElement {
  const color = useColor();
  const { columns, rows } = p.size;
  const view = p.view;
  const filter = activeFilter(p.ui);
  const workers = view ? shownWorkers(view.workers, filter, p.ui.sort, p.ui.reverse) : [];
  const banners = bannersFor(view, p.latch, p.now);
  const hist = view?.diverted ?? null;
  const histRows = hist && hist.count > 0 ? nonEmptySpan(bucketCounts(hist.buckets, hist.count)).length : 0;
  const plan = planLayout({
    rows,
    columns,
    workers: view ? workers.length : 0,
    banners: banners.length,
    hasDecisions: Boolean(view?.decisions),
    hasLatency: p.history.e2eP50Ms.length > 0,
    hasHistogram: Boolean(view),
    histogramRows: histRows,
    panel: childPanelLines(p.child),
    // serve shows its router's log (events included); top shows the routers' events.
    logLines: p.child ? p.child.log.length : view ? Math.max(1, view.events.length) : 0,
    hasEvents: view !== undefined && view.source !== 'engine',
    logIsEvents: !p.child,
    // A worker's detail takes every line between header and footer, as help does.
    help: p.ui.mode === 'help' || (p.ui.mode === 'detail' && view !== undefined),
  });
  const half = Math.floor((columns - 1) / 2);
  const midWidth = plan.wide ? half : columns;
  const blockSize = view?.router.blockSize ?? p.blockSize;
  const limit = view?.router.workerQueueLimit ?? null;

  const waitingKnown = p.history.waitingMax.length > 0;
  // Drawn in this order, later over earlier: the limit first, so the queues stay visible on it.
  const waitingSeries = waitingKnown
    ? [...(p.history.limit ? [p.history.limit] : []), p.history.waitingMin, p.history.waitingMax]
    : [p.history.inflight];
  const limitDrawn = waitingKnown && p.history.limit !== undefined && p.history.limit !== null;
  // Side by side when wide: the columns shared among the charts drawn.
  const charts = [plan.waitingChart, plan.decisionChart, plan.latencyChart].filter((h) => h > 0).length;
  const chartWidth = plan.wide && charts > 1 ? Math.floor((columns - (charts - 1)) / charts) : columns;
  const waitingChart: ChartOptions = {
    height: plan.waitingChart,
    width: chartWidth,
    color,
    colors: waitingKnown ? [...(limitDrawn ? [CHART_COLORS.yellow] : []), CHART_COLORS.green, CHART_COLORS.red] : [CHART_COLORS.cyan],
    marks: [...(limitDrawn ? ['-'] : []), 'o', '#'],
    include: limit !== null && waitingKnown ? [limit] : [],
    exact: limit !== null && waitingKnown ? limit : undefined,
    exactSeries: limitDrawn ? 0 : undefined,
  };
  // Whether the chart can draw the limit exactly on a row (else it is left out, and the title says so).
  const limitOnChart = limitDrawn && exactOnChart(waitingSeries, waitingChart);

  return (
    <Box flexDirection="column" width={columns} height={plan.budget}>
      <Header view={view} title={p.title} target={p.target} intervalMs={p.intervalMs} now={p.now} lines={plan.header} />
      <AlertBanner banners={banners} lines={plan.banners} />
      {plan.help > 0 && p.ui.mode === 'help' ? <HelpOverlay lines={plan.help} width={columns} /> : null}
      {plan.help > 0 && p.ui.mode === 'detail' && view && p.ui.selected !== null ? (
        <WorkerDetail view={view} url={p.ui.selected} history={p.history} width={columns} lines={plan.help} />
      ) : null}
      {view && plan.tableHeader > 0 ? (
        <WorkerTable
          workers={workers}
          total={view.workers.length}
          limit={limit}
          replicas={view.source === 'engine' ? 1 : view.replicas.length}
          sort={p.ui.sort}
          reverse={p.ui.reverse}
          filter={filter}
          width={columns}
          rows={plan.tableRows}
          more={plan.tableMore > 0}
          saturated={view.alerts.allQueued === true || view.alerts.allQueuedInferred}
          trends={p.history.byWorker}
          selected={p.ui.selected}
        />
      ) : null}
      {p.child && plan.panel > 0 ? <ChildPanel child={p.child} lines={plan.panel} /> : null}
      {view && plan.lastEvent > 0 ? <LastEvent events={view.events} /> : null}
      {view && (plan.decisions !== 'none' || plan.histogramTitle > 0) ? (
        <Box flexDirection={plan.wide ? 'row' : 'column'}>
          {plan.decisions !== 'none' ? (
            <Box width={midWidth} marginRight={plan.wide ? 1 : 0}>
              <DecisionMix view={view} mode={plan.decisions} width={midWidth} />
            </Box>
          ) : null}
          {plan.histogramTitle > 0 ? (
            <DivertedHistogram histogram={hist} perS={view.divertedPerS} blockSize={blockSize} width={midWidth} rows={plan.histogramRows} />
          ) : null}
        </Box>
      ) : null}
      {view && charts > 0 ? (
        <Box flexDirection={plan.wide ? 'row' : 'column'}>
          {plan.waitingChart > 0 ? (
            <Box marginRight={plan.wide ? 1 : 0}>
              <HistoryChart
                width={chartWidth}
                title={
                  waitingKnown
                    ? [
                        { text: 'QUEUES', bold: true },
                        '  ',
                        { text: color ? 'busiest' : 'busiest #', color: 'red' },
                        ' and ',
                        { text: color ? 'idlest' : 'idlest o', color: 'green' },
                        ' queue',
                        ...(p.history.limit
                          ? limitOnChart
                            ? [' vs ', { text: color ? 'limit' : 'limit -', color: 'yellow' as const }]
                            : [` · limit ${limit} is below the first row`]
                          : []),
                      ]
                    : [{ text: 'IN-FLIGHT', bold: true }, '  router-local total (this source has no engine queues)']
                }
                lines={chartLines(waitingSeries, waitingChart)}
              />
            </Box>
          ) : null}
          {plan.decisionChart > 0 ? (
            <Box marginRight={plan.wide && plan.latencyChart > 0 ? 1 : 0}>
              <HistoryChart
                width={chartWidth}
                title={[
                  { text: 'DECISIONS/s', bold: true },
                  '  ',
                  { text: color ? 'hit' : 'hit h', color: 'green' },
                  ' · ',
                  { text: color ? 'miss' : 'miss m', color: 'blue' },
                  ' · ',
                  { text: color ? 'queued' : 'queued q', color: 'yellow' },
                  ' · ',
                  { text: color ? 'all_queued' : 'all_queued a', color: 'red' },
                ]}
                lines={chartLines([p.history.hit, p.history.miss, p.history.queued, p.history.allQueued], {
                  height: plan.decisionChart,
                  width: chartWidth,
                  color,
                  colors: [CHART_COLORS.green, CHART_COLORS.blue, CHART_COLORS.yellow, CHART_COLORS.red],
                  marks: ['h', 'm', 'q', 'a'],
                })}
              />
            </Box>
          ) : null}
          {plan.latencyChart > 0 ? (
            <Box>
              <HistoryChart
                width={chartWidth}
                title={[
                  { text: 'LATENCY ms', bold: true },
                  '  ',
                  { text: color ? 'e2e p50' : 'e2e p50 o', color: 'green' },
                  ' · ',
                  { text: color ? 'e2e p99' : 'e2e p99 #', color: 'red' },
                  ' · ',
                  { text: color ? 'TTFT p50' : 'TTFT p50 t', color: 'cyan' },
                  ...p99AboveTopBucket(p.history, chartWidth),
                ]}
                lines={chartLines([p.history.ttftP50Ms, p.history.e2eP50Ms, p.history.e2eP99Ms], {
                  height: plan.latencyChart,
                  width: chartWidth,
                  color,
                  colors: [CHART_COLORS.cyan, CHART_COLORS.green, CHART_COLORS.red],
                  marks: ['t', 'o', '#'],
                })}
              />
            </Box>
          ) : null}
        </Box>
      ) : null}
      {p.child && plan.log > 0 ? <LogPane log={p.child.log} lines={plan.log} /> : null}
      {!p.child && view && plan.log > 0 ? <EventPane events={view.events} lines={plan.log} /> : null}
      {plan.footer > 0 ? (
        <Box flexGrow={1} alignItems="flex-end">
          <Footer ui={p.ui} pausedForMs={p.pausedForMs} quitLabel={p.child && p.child.phase !== 'exited' ? 'stop' : 'quit'} />
        </Box>
      ) : null}
    </Box>
  );
}

/**
 * Where the e2e p99 in view lay past the histogram's top bucket, its line is drawn flat
 * at that bound: the title says the p99 was above it, as the header does.
 */
function p99AboveTopBucket(history: HistorySeries, chartWidth: number): SegmentInput[] {
  const points = pointsThatFit(chartWidth);
  const flagged = history.e2eP99LowerBound.slice(-points);
  const ms = history.e2eP99Ms.slice(-points);
  const bounds = ms.filter((_, i) => flagged[i] === true);
  if (bounds.length === 0) return [];
  return [' · ', { text: `p99 ${fmtQuantileSeconds({ value: Math.max(...bounds) / 1000, lowerBound: true })}`, color: 'red' }];
}
