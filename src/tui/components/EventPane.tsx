import { Box } from 'ink';
import type { ReactElement } from 'react';
import type { FleetEvent } from '../../fleet/index.js';
import { shortUrl } from '../../fleet/index.js';
import { Line } from './Line.js';
import type { Tone } from './Line.js';

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
};

/** The routers' newest fleet events with their time (`top`; `serve` shows the router's own log instead). */
export function EventPane({ events, lines }: { events: readonly FleetEvent[]; lines: number }): ReactElement | null {
  if (lines <= 0) return null;
  const shown = events.slice(-lines);
  return (
    <Box flexDirection="column">
      <Line segments={[{ text: 'EVENTS', bold: true }, { text: events.length === 0 ? '  none yet' : '  newest last', dim: true }]} />
      {shown.map((e, i) => (
        <Line
          key={i}
          segments={[
            { text: new Date(e.atMs).toTimeString().slice(0, 8), dim: true },
            '  ',
            { text: e.kind.replace(/_/g, ' '), color: TONE[e.kind] },
            e.worker !== null ? `  ${shortUrl(e.worker, 40)}` : '',
            `  ${e.message}`,
            e.replica !== undefined ? { text: `  (${e.replica.replace(/^https?:\/\//, '')})`, dim: true } : '',
          ]}
        />
      ))}
      {Array.from({ length: lines - shown.length }, (_, i) => (
        <Line key={`pad${i}`} segments={[' ']} />
      ))}
    </Box>
  );
}
