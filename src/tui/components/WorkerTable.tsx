import { Box } from 'ink';
import { isQueued } from '../../contract/index.js';
import type { ReactElement } from 'react';
import { DASH, bar, fmtAge, fmtInt, fmtRate, pad, shortUrl, waitingLevel } from '../../fleet/index.js';
import type { SortKey } from '../../fleet/index.js';
import type { FleetWorker } from '../../fleet/index.js';
import { BAR_WIDTH, planColumns } from '../table-columns.js';
import type { Column, ColumnId } from '../table-columns.js';
import { Line } from './Line.js';
import type { Segment, Tone } from './Line.js';

export interface WorkerTableProps {
  /** Sorted and filtered. */
  workers: readonly FleetWorker[];
  /** Workers before the filter. */
  total: number;
  limit: number | null;
  replicas: number;
  sort: SortKey;
  reverse?: boolean;
  filter: string;
  width: number;
  /** Worker rows to draw; the rest are summarised in one "more" line when `more`. */
  rows: number;
  more: boolean;
  /** The fleet is saturated (all_queued): a gate rejection diverts nothing, so REJ/s is dimmed. */
  saturated?: boolean;
  /** Each worker's recent waiting counts, newest last, for the RECENT sparkline. */
  trends?: ReadonlyMap<string, ReadonlyArray<number | null>>;
  /** The selected worker's URL (marked with › and drawn inverse); Enter opens its detail. */
  selected?: string | null;
}

const SORTED: Record<SortKey, ColumnId> = {
  waiting: 'waiting',
  rejections: 'rejections',
  url: 'worker',
  running: 'running',
  inflight: 'inflight',
  age: 'age',
};
const LEVEL_TONE: Record<string, Tone | undefined> = { ok: 'green', warn: 'yellow', over: 'red' };

/**
 * One row per engine: its waiting queue as a bar against the limit (green below 70%,
 * yellow from 70%, red at the limit), running, router in-flight, the load sample's age
 * (stale marked), whether the gate would reject it now, gate rejections per second
 * and the breaker. Gated workers say GATED in words, so the mark survives NO_COLOR.
 */
export function WorkerTable(p: WorkerTableProps): ReactElement {
  // While a worker is selected, rows open with a one-character mark column (› on the selected row), so the mark survives NO_COLOR.
  const marking = p.selected !== undefined && p.selected !== null;
  const cols = planColumns({ width: p.width - (marking ? 1 : 0), workers: p.workers, limit: p.limit, replicas: p.replicas });
  const header: Segment[] = marking ? [{ text: ' ' }] : [];
  cols.forEach((c, i) => {
    const mark = SORTED[p.sort] === c.id ? (p.reverse ? '▲' : '▼') : '';
    header.push({ text: (i > 0 ? ' ' : '') + pad(c.title + mark, c.width, c.align), bold: true });
  });
  const shown = p.workers.slice(0, Math.max(0, p.rows));
  const hidden = p.workers.length - shown.length;
  const filtered = p.total - p.workers.length;
  return (
    <Box flexDirection="column">
      <Line segments={header} />
      {shown.length === 0 && p.rows > 0 ? (
        <Line
          segments={[{ text: p.filter ? `no worker matches "${p.filter}" (${p.total} hidden; Esc clears)` : 'no workers', dim: true }]}
        />
      ) : null}
      {shown.map((w) => (
        <Line
          key={w.url}
          segments={[
            ...(marking ? [w.url === p.selected ? { text: '›', bold: true } : ' '] : []),
            ...cols.flatMap((c, i) => [
              i > 0 ? ' ' : '',
              ...cell(c, w, p.limit, p.saturated === true, p.trends?.get(w.url), w.url === p.selected),
            ]),
          ]}
        />
      ))}
      {p.more && (hidden > 0 || filtered > 0) ? (
        <Line
          segments={[
            {
              text: `… ${hidden > 0 ? `${hidden} more` : ''}${hidden > 0 && filtered > 0 ? ', ' : ''}${filtered > 0 ? `${filtered} filtered out` : ''} (${p.workers.length + filtered} workers; / filters, s sorts)`,
              dim: true,
            },
          ]}
        />
      ) : p.more ? (
        <Line segments={[' ']} />
      ) : null}
    </Box>
  );
}

function cell(
  c: Column,
  w: FleetWorker,
  limit: number | null,
  saturated: boolean,
  trend: ReadonlyArray<number | null> | undefined,
  selected = false,
): Segment[] {
  const text = (s: string, extra: Omit<Segment, 'text'> = {}): Segment[] => [{ text: pad(s, c.width, c.align), ...extra }];
  switch (c.id) {
    case 'worker':
      return text(shortUrl(w.url, c.width), {
        ...(w.healthy === false ? { color: 'red' as const } : {}),
        ...(selected ? { inverse: true } : {}),
      });
    case 'waiting': {
      const level = waitingLevel(w.waiting, limit);
      if (w.waiting === null) return text(w.fresh === false ? 'unknown' : DASH, { dim: true });
      if (limit === null) return text(String(w.waiting));
      const num = `${w.waiting}/${limit}`;
      const over = w.waiting > limit ? '+' : '';
      const b = bar(Math.min(w.waiting, limit), limit, BAR_WIDTH - over.length, '·') + over;
      return [
        { text: b, color: LEVEL_TONE[level] },
        {
          text: ' ' + pad(num, c.width - BAR_WIDTH - 1, 'left'),
          color: level === 'ok' ? undefined : LEVEL_TONE[level],
          bold: level === 'over',
        },
      ];
    }
    case 'trend':
      return sparkline(trend ?? [], limit, c.width);
    case 'running':
      return text(fmtInt(w.running));
    case 'inflight':
      return text(fmtInt(w.inflight));
    case 'replicas':
      return text(w.inflightByReplica.map((v) => fmtInt(v)).join('|'));
    case 'age':
      if (w.sampleAgeMs === null) return text(w.fresh === false ? 'none' : DASH, { color: w.fresh === false ? 'yellow' : undefined });
      if (w.fresh === false) return text(`${fmtAge(w.sampleAgeMs)} stale`, { color: 'yellow' });
      // Pushed load is named; polled is the default and goes unmarked.
      return text(w.loadSource === 'push' ? `${fmtAge(w.sampleAgeMs)} push` : fmtAge(w.sampleAgeMs));
    case 'gated':
      return w.gated ? text('GATED', { color: 'red', bold: true, inverse: true }) : text(w.gated === null ? DASH : '', { dim: true });
    case 'rejections': {
      const r = w.gateRejectionsPerS;
      // Saturated, a rejection keeps the request on its queued owner: not a diversion, so not a warning.
      if (saturated) return text(r === null ? DASH : fmtRate(r), { dim: true });
      return text(r === null ? (w.gateRejectionsTotal === null ? DASH : '…') : fmtRate(r), r !== null && r > 0 ? { color: 'yellow' } : {});
    }
    case 'breaker':
      return text(
        w.breaker === 'half_open' ? 'half' : (w.breaker ?? DASH),
        w.breaker === 'open' ? { color: 'red', bold: true } : w.breaker === 'half_open' ? { color: 'yellow' } : {},
      );
  }
}

const SPARKS = '▁▂▃▄▅▆▇█';

/**
 * A worker's recent waiting counts as one glyph each, newest at the right, scaled so
 * that the full block is the queue limit (or the largest count, when there is no
 * limit or the queue went past it); samples at or over the limit are red. An unknown
 * sample is a space.
 */
function sparkline(values: ReadonlyArray<number | null>, limit: number | null, width: number): Segment[] {
  const shown = values.slice(-width);
  const top = Math.max(1, limit ?? 0, ...shown.map((v) => v ?? 0));
  const out: Segment[] = [{ text: ' '.repeat(width - shown.length) }];
  for (const v of shown) {
    if (v === null) out.push({ text: ' ' });
    else
      out.push({
        text: SPARKS[Math.min(7, Math.round((v / top) * 7))]!,
        ...(isQueued(v, limit) ? { color: 'red' as const } : {}),
      });
  }
  return out;
}
