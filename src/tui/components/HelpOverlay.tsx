import { Box } from 'ink';
import type { ReactElement } from 'react';
import { Line } from './Line.js';
import type { SegmentInput } from './Line.js';

const KEYS: Array<[string, string]> = [
  ['q, Ctrl-C', 'quit (serve: drain and stop the router first; again: stop now)'],
  ['p, space', 'pause the view (data keeps arriving; p again shows the latest)'],
  ['s', 'cycle the sort: waiting, gate rejections, running, in-flight, sample age, url'],
  ['S', 'turn the sort around'],
  ['/', 'filter workers by URL (Enter keeps it, Esc clears it)'],
  [
    '↓ ↑, j k',
    "select a worker; Enter (or →) opens its detail: load source and sample age, the gate's verdict, rejections, latency, history, its events",
  ],
  ['Esc', 'leave the detail, then drop the selection, then clear the filter'],
  ['?', 'this help (any key closes it)'],
];

const COLUMNS: Array<[string, string]> = [
  ['WAITING', 'engine-reported queue against --worker-queue-limit: green <70%, yellow >=70%, red at the limit'],
  ['RECENT', 'the waiting queue over the last samples, newest right; a full block is the limit, red at or over it'],
  ['GATE', 'GATED: the queue gate would turn this worker away now'],
  ['SAMPLE', 'age of the load sample; "stale" once older than --load-freshness-ms (the gate then admits it)'],
  [
    'REJ/s',
    'cache candidates the gate rejected per second; dimmed while the fleet is saturated (all_queued), when a rejection diverts nothing and the request stays with its owner',
  ],
  ['INFL', 'router-local in-flight requests (PER-REPL: per router replica)'],
  ['hit ratio', 'cache_hit / (cache_hit + cache_miss + cache_worker_queued): all_queued is saturation, not routing'],
  ['DIVERTED', 'prefix blocks (≈tokens) the gate gave up per diversion'],
  ['policy?', 'read off metric labels (Prometheus source), not reported by the router'],
];

const KEY_WIDTH = 13;

/**
 * The key and column reference, each description wrapped to the width under its key
 * (a cut-off help line hides half its meaning), then cut to the lines it is given.
 */
export function HelpOverlay({ lines, width }: { lines: number; width: number }): ReactElement {
  const entry = ([k, d]: [string, string]): SegmentInput[][] =>
    wrap(d, Math.max(20, width - KEY_WIDTH)).map((part, i): SegmentInput[] => [
      { text: i === 0 ? `  ${k.padEnd(KEY_WIDTH - 2)}` : ' '.repeat(KEY_WIDTH), bold: true },
      part,
    ]);
  const rows: SegmentInput[][] = [
    [{ text: 'KEYS', bold: true }],
    ...KEYS.flatMap(entry),
    [' '],
    [{ text: 'COLUMNS', bold: true }],
    ...COLUMNS.flatMap(entry),
  ];
  return (
    <Box flexDirection="column">
      {rows.slice(0, Math.max(0, lines)).map((segments, i) => (
        <Line key={i} segments={segments} />
      ))}
    </Box>
  );
}

/** Words into lines of at most `width` characters (a word longer than that is cut). */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line === '') line = word.slice(0, width);
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      out.push(line);
      line = word.slice(0, width);
    }
  }
  if (line !== '') out.push(line);
  return out;
}
