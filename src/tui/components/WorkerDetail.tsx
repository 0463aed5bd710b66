import { Box } from 'ink';
import type { ReactElement } from 'react';
import { DASH, fmtAge, fmtInt, fmtPct, fmtQuantileSeconds, fmtRate, shortUrl } from '../../fleet/index.js';
import type { AdminDecision } from '../../contract/index.js';
import type { FleetEvent, FleetView, FleetWorker, LatencyQuantiles } from '../../fleet/index.js';
import { CHART_COLORS, chartLines } from '../chart.js';
import { useColor } from '../color-context.js';
import type { HistorySeries } from '../history.js';
import { HistoryChart } from './HistoryChart.js';
import { Line } from './Line.js';
import type { SegmentInput } from './Line.js';

export interface WorkerDetailProps {
  view: FleetView;
  /** The selected worker's URL; gone from the view, the detail says so. */
  url: string;
  history: HistorySeries;
  width: number;
  /** Lines the detail may take. */
  lines: number;
}

/** Facts, then history, then events: the first lines survive the smallest terminal. */
const FACT_LINES = 6;

/**
 * One worker, everything the console knows of it (Enter on a selected row): its
 * state and the gate's verdict, where its load comes from and how old it is, what
 * the routers sent it and how fast it answered, a chart of its waiting, running and
 * in-flight counts against the limit, and its events. What the source does not
 * report is named on its own line rather than drawn as dashes.
 */
export function WorkerDetail(p: WorkerDetailProps): ReactElement {
  const color = useColor();
  const w = p.view.workers.find((x) => x.url === p.url);
  const limit = p.view.router.workerQueueLimit;
  if (!w) {
    return (
      <Box flexDirection="column" height={p.lines}>
        <Line
          segments={[{ text: 'WORKER ', bold: true }, shortUrl(p.url), { text: '  is no longer in the view (Esc back)', color: 'yellow' }]}
        />
      </Box>
    );
  }
  const facts = factLines(w, p.view, limit, p.history).slice(0, p.lines);
  const events = p.view.events.filter((e) => e.worker === w.url);
  const decisions = (p.view.recentDecisions ?? []).filter((d) => d.worker === w.url || d.retried_to === w.url);
  const left = p.lines - facts.length;
  // Decisions and events get what the chart leaves, at least 2 lines each (title + one) when there are any.
  const decisionLines = decisions.length === 0 ? 0 : Math.min(decisions.length + 1, Math.max(2, Math.floor((left - 8) / 2)));
  const eventLines = events.length === 0 ? 0 : Math.min(events.length + 1, Math.max(2, left - 8 - decisionLines));
  const chartHeight = left - eventLines - decisionLines - 2;
  return (
    <Box flexDirection="column" height={p.lines}>
      {facts.map((segments, i) => (
        <Line key={i} segments={segments} />
      ))}
      {chartHeight >= 2 ? (
        <WorkerChart url={w.url} history={p.history} limit={limit} width={p.width} height={chartHeight} color={color} />
      ) : null}
      {decisionLines > 0 && left >= 2 ? <WorkerDecisions decisions={decisions} lines={Math.min(decisionLines, left) - 1} /> : null}
      {eventLines > 0 && left - decisionLines >= 2 ? (
        <WorkerEvents events={events} lines={Math.min(eventLines, left - decisionLines) - 1} />
      ) : null}
    </Box>
  );
}

function factLines(w: FleetWorker, view: FleetView, limit: number | null, history: HistorySeries): SegmentInput[][] {
  const state: SegmentInput[] =
    w.gated === true
      ? [{ text: 'GATED', color: 'red', bold: true, inverse: true }, ` waiting ${fmtInt(w.waiting)} ≥ limit ${limit}`]
      : w.gated === false
        ? [{ text: 'admitted', color: 'green' }, limit !== null ? ` waiting ${fmtInt(w.waiting)} < limit ${limit}` : ' (no queue limit)']
        : [{ text: 'gate unknown', dim: true }];
  const health: SegmentInput[] = [
    w.healthy === false
      ? { text: 'unhealthy', color: 'red', bold: true }
      : w.healthy === true
        ? 'healthy'
        : { text: 'health unknown', dim: true },
    ' · breaker ',
    w.breaker === 'open'
      ? { text: 'open', color: 'red', bold: true }
      : w.breaker === 'half_open'
        ? { text: 'half-open', color: 'yellow' }
        : (w.breaker ?? DASH),
  ];
  const replicas =
    view.replicas.length > 1 && view.source !== 'engine' ? ` (${w.inflightByReplica.map((v) => fmtInt(v)).join(' | ')} by router)` : '';
  const load: SegmentInput[] = [
    { text: 'load   ', bold: true },
    w.loadSource === 'push' ? 'by push' : w.loadSource === 'poll' ? 'by poll' : { text: 'source unknown', dim: true },
    ' · sample ',
    w.sampleAgeMs === null ? { text: 'none', color: 'yellow' } : fmtAge(w.sampleAgeMs),
    w.fresh === false ? { text: ' stale: the gate admits it blindly', color: 'yellow' } : w.fresh === true ? ' fresh' : '',
    ` · waiting ${fmtInt(w.waiting)} · running ${fmtInt(w.running)} · in-flight ${fmtInt(w.inflight)}${replicas}`,
  ];
  const kv: SegmentInput[] | null =
    w.kvUsage !== undefined
      ? [
          { text: 'kv     ', bold: true },
          `${w.kvUsage === null ? DASH : fmtPct(w.kvUsage)} of the engine's KV cache in use  `,
          ...kvSparkline(history.kvUsageByWorker.get(w.url) ?? []),
        ]
      : null;
  const gate: SegmentInput[] = [
    { text: 'gate   ', bold: true },
    ...state,
    ` · rejections ${fmtInt(w.gateRejectionsTotal)} total, ${fmtRate(w.gateRejectionsPerS)}/s`,
    w.gated === true ? { text: ' · its cache-affine requests go to other owners or the least loaded', dim: true } : '',
  ];
  const served: SegmentInput[] = [
    { text: 'served ', bold: true },
    `${fmtInt(w.requestsTotal)} requests`,
    ...prefillSegments(w.prefillTokensPerS),
    ...latencySegments(w.latency),
  ];
  const lacks = [
    w.latency === null ? 'latency per worker' : null,
    w.kvUsage === undefined ? 'KV cache usage' : null,
    w.prefillTokensPerS === undefined ? 'prefill rate' : null,
    view.source === 'engine' ? 'router decisions' : (view.recentDecisions ?? []).length === 0 ? 'decisions per worker' : null,
  ].filter((x): x is string => x !== null);
  return [
    [
      { text: 'WORKER ', bold: true },
      { text: w.url, bold: true },
      '  ',
      ...health,
      { text: '   Esc back · ↑↓ j k other workers', dim: true },
    ],
    load,
    ...(kv ? [kv] : []),
    gate,
    served,
    [
      { text: 'not in this source: ', dim: true },
      { text: lacks.join(', '), dim: true },
    ],
  ].slice(0, FACT_LINES);
}

/** The prefill rate the routers learnt; while cold, that it is still learning (docs/routing.md §Learned prefill rate). */
function prefillSegments(rate: number | null | undefined): SegmentInput[] {
  if (rate === undefined) return [];
  return rate === null ? [' · prefill ', { text: 'learning', dim: true }] : [` · prefill ${fmtInt(Math.round(rate))} tok/s`];
}

function latencySegments(l: FleetWorker['latency']): SegmentInput[] {
  if (l === null) return [];
  const q = (x: LatencyQuantiles): string =>
    x.e2eP50 === null
      ? DASH
      : `e2e p50 ${fmtQuantileSeconds(x.e2eP50)} p99 ${fmtQuantileSeconds(x.e2eP99)}${x.ttftP50 !== null ? ` · TTFT p50 ${fmtQuantileSeconds(x.ttftP50)} p99 ${fmtQuantileSeconds(x.ttftP99)}` : ''}`;
  return [' · last 5 s ', q(l.window), { text: ` · since start ${q(l.overall)}`, dim: true }];
}

function WorkerChart(p: {
  url: string;
  history: HistorySeries;
  limit: number | null;
  width: number;
  height: number;
  color: boolean;
}): ReactElement {
  const known = (xs: ReadonlyArray<number | null> | undefined): number[] => (xs ?? []).map((v) => v ?? 0);
  const waiting = known(p.history.byWorker.get(p.url));
  const running = known(p.history.runningByWorker.get(p.url));
  const inflight = known(p.history.inflightByWorker.get(p.url));
  const limit = p.limit !== null && waiting.length > 0 ? waiting.map(() => p.limit!) : null;
  const series = [...(limit ? [limit] : []), inflight, running, waiting];
  const lines = chartLines(series, {
    height: p.height,
    width: p.width,
    color: p.color,
    colors: [...(limit ? [CHART_COLORS.yellow] : []), CHART_COLORS.cyan, CHART_COLORS.green, CHART_COLORS.red],
    marks: [...(limit ? ['-'] : []), 'i', 'r', 'w'],
    include: p.limit !== null ? [p.limit] : [],
    ...(p.limit !== null && limit ? { exact: p.limit, exactSeries: 0 } : {}),
  });
  const title: SegmentInput[] = [
    { text: 'HISTORY', bold: true },
    '  ',
    { text: p.color ? 'waiting' : 'waiting w', color: 'red' },
    ' · ',
    { text: p.color ? 'running' : 'running r', color: 'green' },
    ' · ',
    { text: p.color ? 'in-flight' : 'in-flight i', color: 'cyan' },
    ...(limit ? [' vs ', { text: p.color ? 'limit' : 'limit -', color: 'yellow' as const }] : []),
  ];
  return <HistoryChart title={title} lines={lines} width={p.width} />;
}

/** The last decisions that landed on the worker (routerctl explain --request ID tells one in full). */
function WorkerDecisions({ decisions, lines }: { decisions: readonly AdminDecision[]; lines: number }): ReactElement {
  const shown = decisions.slice(-Math.max(0, lines));
  return (
    <Box flexDirection="column">
      <Line
        segments={[
          { text: 'DECISIONS', bold: true },
          { text: '  landed here, newest last (routerctl explain --request ID tells one)', dim: true },
        ]}
      />
      {shown.map((d) => (
        <Line
          key={d.seq}
          segments={[
            { text: new Date(d.at_ms).toTimeString().slice(0, 8), dim: true },
            ` ${d.request_id}  `,
            { text: (d.decision ?? d.reason).padEnd(19), color: DECISION_TONE[d.decision ?? ''] },
            d.query_blocks > 0 ? ` ${d.matched_blocks}/${d.query_blocks} blk` : '',
            d.best_worker !== null && d.best_worker !== d.worker && d.best_matched_blocks > d.matched_blocks
              ? { text: ` (best ${shortUrl(d.best_worker)} ${d.best_matched_blocks})`, color: 'yellow' }
              : '',
            d.retried_to !== null ? ` retried → ${shortUrl(d.retried_to)}` : '',
            d.cached_tokens !== null ? ` · cached ${d.cached_tokens}` : '',
            d.ttft_ms !== null ? ` · ttft ${d.ttft_ms}ms` : '',
          ]}
        />
      ))}
    </Box>
  );
}

const DECISION_TONE: Record<string, 'green' | 'blue' | 'yellow' | 'red' | undefined> = {
  cache_hit: 'green',
  cache_miss: 'blue',
  cache_worker_queued: 'yellow',
  all_queued: 'red',
};

function WorkerEvents({ events, lines }: { events: readonly FleetEvent[]; lines: number }): ReactElement {
  const shown = events.slice(-Math.max(0, lines));
  return (
    <Box flexDirection="column">
      <Line
        segments={[
          { text: 'EVENTS', bold: true },
          { text: '  this worker, newest last', dim: true },
        ]}
      />
      {shown.map((e, i) => (
        <Line
          key={i}
          segments={[{ text: new Date(e.atMs).toTimeString().slice(0, 8), dim: true }, '  ', e.kind.replace(/_/g, ' '), `  ${e.message}`]}
        />
      ))}
    </Box>
  );
}

const SPARKS = '▁▂▃▄▅▆▇█';

/** The last 20 KV usage shares as glyphs (a full block is 100 %); red from 90 %. */
function kvSparkline(values: ReadonlyArray<number | null>): SegmentInput[] {
  return values
    .slice(-20)
    .map((v) => (v === null ? ' ' : { text: SPARKS[Math.min(7, Math.round(v * 7))]!, ...(v >= 0.9 ? { color: 'red' as const } : {}) }));
}
