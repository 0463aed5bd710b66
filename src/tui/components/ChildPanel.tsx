import { Box } from 'ink';
import type { ReactElement } from 'react';
import type { ChildState } from '../child-state.js';
import { Line } from './Line.js';

/** Lines the panel wants for a child state: nothing while it runs. */
export function childPanelLines(child: ChildState | undefined): number {
  if (!child) return 0;
  if (child.phase === 'stopping' || child.phase === 'starting') return 1;
  if (child.phase === 'exited') return 2 + Math.min(12, child.log.length);
  return 0;
}

/**
 * What happened to the router process: a one-line notice while it drains, and when
 * it exited on its own, its exit status and last log lines, so a crash reads as a
 * crash and not as an empty fleet.
 */
export function ChildPanel({ child, lines }: { child: ChildState; lines: number }): ReactElement | null {
  if (lines <= 0) return null;
  if (child.phase === 'starting') return <Line segments={[{ text: 'starting the router…', dim: true }]} />;
  if (child.phase === 'stopping') {
    return (
      <Line
        segments={[
          { text: ' STOPPING ', color: 'yellow', inverse: true, bold: true },
          ' q or Ctrl-C again: stop now · draining in-flight requests, then stopping the router',
        ]}
      />
    );
  }
  if (child.phase !== 'exited') return null;
  const status = child.exit?.signal ? `signal ${child.exit.signal}` : `status ${child.exit?.code ?? '?'}`;
  const tail = lines > 2 ? child.log.slice(-(lines - 2)) : [];
  return (
    <Box flexDirection="column">
      <Line
        segments={[
          {
            text: child.crashed ? ' ROUTER EXITED ' : ' ROUTER STOPPED ',
            color: child.crashed ? 'red' : 'yellow',
            inverse: true,
            bold: true,
          },
          ` the router process${child.pid ? ` (pid ${child.pid})` : ''} exited with ${status}${child.crashed ? '; the numbers below are its last' : ''} · q quits`,
        ]}
      />
      {lines >= 2 ? <Line segments={[{ text: tail.length > 0 ? 'its last log lines:' : 'it wrote no log lines', dim: true }]} /> : null}
      {tail.map((l, i) => (
        <Line key={i} segments={[{ text: l || ' ', color: child.crashed ? 'red' : undefined }]} />
      ))}
      {lines - 2 - tail.length > 0
        ? Array.from({ length: lines - 2 - tail.length }, (_, i) => <Line key={`pad${i}`} segments={[' ']} />)
        : null}
    </Box>
  );
}
