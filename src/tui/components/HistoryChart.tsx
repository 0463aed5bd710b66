import { Box } from 'ink';
import type { ReactElement } from 'react';
import { Line } from './Line.js';
import type { SegmentInput } from './Line.js';

/**
 * A titled asciichart, one <Text> row per chart line: a multi-line string in a single
 * <Text> would wrap or collapse (docs/dependencies.md §Multi-line charts in Ink). The
 * lines come from chartLines(), already cut to the width and exactly the planned
 * height.
 */
export function HistoryChart({ title, lines, width }: { title: SegmentInput[]; lines: string[]; width: number }): ReactElement {
  return (
    <Box flexDirection="column" width={width}>
      <Line segments={title} />
      {lines.map((l, i) => (
        <Line key={i} segments={[l === '' ? ' ' : l]} />
      ))}
    </Box>
  );
}
