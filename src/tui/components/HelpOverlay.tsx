import { Box } from 'ink';
import type { ReactElement } from 'react';
import { Line } from './Line.js';
import type { SegmentInput } from './Line.js';

const KEYS: Array<[string, string]> = [
  ['q, Ctrl-C', 'quit (serve: drain and stop the router first; again: stop now)'],
  ['p, space', 'pause the view (data keeps arriving; p again shows the latest)'],
  ['s', 'cycle the sort: waiting, gate rejections, url'],
  ['/', 'filter workers by URL (Enter keeps it, Esc clears it)'],
  ['Esc', 'clear the filter'],
  ['?', 'this help (any key closes it)'],
];

const COLUMNS: Array<[string, string]> = [
  ['WAITING', 'engine-reported queue against --worker-queue-limit: green <70%, yellow >=70%, red at the limit'],
  ['GATE', 'GATED: the queue gate would turn this worker away now'],
  ['SAMPLE', 'age of the load sample; "stale" once older than --load-freshness-ms (the gate then admits it)'],
  ['REJ/s', 'cache candidates the gate rejected per second'],
  ['INFL', 'router-local in-flight requests (PER-REPL: per router replica)'],
  ['hit ratio', 'cache_hit / (cache_hit + cache_miss + cache_worker_queued): all_queued is saturation, not routing'],
  ['DIVERTED', 'prefix blocks (≈tokens) the gate gave up per diversion'],
  ['policy?', 'read off metric labels (Prometheus source), not reported by the router'],
];

/** The key and column reference, cut to the lines it is given. */
export function HelpOverlay({ lines }: { lines: number }): ReactElement {
  const rows: SegmentInput[][] = [
    [{ text: 'KEYS', bold: true }],
    ...KEYS.map(([k, d]): SegmentInput[] => [{ text: `  ${k.padEnd(11)}`, bold: true }, d]),
    [' '],
    [{ text: 'COLUMNS', bold: true }],
    ...COLUMNS.map(([k, d]): SegmentInput[] => [{ text: `  ${k.padEnd(11)}`, bold: true }, d]),
  ];
  return (
    <Box flexDirection="column">
      {rows.slice(0, Math.max(0, lines)).map((segments, i) => (
        <Line key={i} segments={segments} />
      ))}
    </Box>
  );
}
