import { Box } from 'ink';
import type { ReactElement } from 'react';
import type { FleetEvent } from '../../fleet/index.js';
import { shortUrl } from '../../fleet/index.js';
import { Line } from './Line.js';
import type { SegmentInput, Tone } from './Line.js';

const TONE: Record<string, Tone | undefined> = {
  saturation_begin: 'red',
  worker_gated: 'yellow',
  breaker_open: 'red',
  breaker_half_open: 'yellow',
  worker_unreachable: 'red',
  saturation_end: 'green',
  worker_released: 'green',
  breaker_closed: 'green',
  worker_reachable: 'green',
  replica_down: 'red',
  replica_up: 'green',
  diversion_burst: 'yellow',
  diversion_burst_end: 'green',
};

/** One event: its time, its kind in its tone, the worker, what happened, and the replica that said so. */
function eventSegments(e: FleetEvent): SegmentInput[] {
  return [
    { text: new Date(e.atMs).toTimeString().slice(0, 8), dim: true },
    '  ',
    { text: e.kind.replace(/_/g, ' '), color: TONE[e.kind] },
    e.worker !== null ? `  ${shortUrl(e.worker, 40)}` : '',
    `  ${e.message}`,
    e.replica !== undefined ? { text: `  (${e.replica.replace(/^https?:\/\//, '')})`, dim: true } : '',
  ];
}

/** The routers' newest fleet events with their time (`top`; `serve` shows the router's own log instead). */
export function EventPane({ events, lines }: { events: readonly FleetEvent[]; lines: number }): ReactElement | null {
  if (lines <= 0) return null;
  const shown = events.slice(-lines);
  return (
    <Box flexDirection="column">
      <Line
        segments={[
          { text: 'EVENTS', bold: true },
          { text: events.length === 0 ? '  none yet' : '  newest last', dim: true },
        ]}
      />
      {shown.map((e, i) => (
        <Line key={i} segments={eventSegments(e)} />
      ))}
      {Array.from({ length: lines - shown.length }, (_, i) => (
        <Line key={`pad${i}`} segments={[' ']} />
      ))}
    </Box>
  );
}

/** The newest event on one line, where no pane of them fits (80×24). */
export function LastEvent({ events }: { events: readonly FleetEvent[] }): ReactElement {
  const last = events.at(-1);
  return <Line segments={[{ text: 'EVENT ', bold: true }, ...(last ? eventSegments(last) : [{ text: 'none yet', dim: true }])]} />;
}
