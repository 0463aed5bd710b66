import { Box } from 'ink';
import type { ReactElement } from 'react';
import { Line } from './Line.js';

/** The newest `lines` of the supervised router's log, under a title. */
export function LogPane({ log, lines }: { log: string[]; lines: number }): ReactElement | null {
  if (lines <= 0) return null;
  const shown = log.slice(-lines);
  return (
    <Box flexDirection="column">
      <Line
        segments={[
          { text: 'ROUTER LOG', bold: true },
          { text: '  (stderr of the router process)', dim: true },
        ]}
      />
      {shown.map((l, i) => (
        <Line key={i} segments={[{ text: l || ' ', dim: true }]} />
      ))}
      {Array.from({ length: lines - shown.length }, (_, i) => (
        <Line key={`pad${i}`} segments={[' ']} />
      ))}
    </Box>
  );
}
