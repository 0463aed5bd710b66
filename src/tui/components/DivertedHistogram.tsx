import { Box } from 'ink';
import type { ReactElement } from 'react';
import { bar, bucketCounts, fmtCount, fmtRate, fmtTokens, nonEmptySpan, pad } from '../../fleet/index.js';
import type { Histogram } from '../../fleet/index.js';
import { Line } from './Line.js';

export interface DivertedHistogramProps {
  histogram: Histogram | null;
  perS: number | null;
  blockSize: number;
  width: number;
  /** Bucket rows to draw under the title. */
  rows: number;
}

/**
 * What affinity the queue gate gave up: for each diversion (cache_worker_queued), the
 * deepest matched prefix of the gated owners, in blocks and approximate tokens. A
 * heap of deep diversions says the limit is tight for this traffic. Only non-empty
 * buckets are drawn; when they do not all fit, the fullest ones are kept, in order.
 */
export function DivertedHistogram({ histogram: h, perS, blockSize, width, rows }: DivertedHistogramProps): ReactElement {
  if (!h)
    return (
      <Line
        segments={[
          { text: 'DIVERTED OVERLAP', bold: true },
          { text: '  not exported by this router', dim: true },
        ]}
      />
    );
  if (h.count === 0)
    return (
      <Line
        segments={[
          { text: 'DIVERTED OVERLAP', bold: true },
          { text: '  no diversions yet', dim: true },
        ]}
      />
    );
  const mean = h.sum / h.count;
  const span = nonEmptySpan(bucketCounts(h.buckets, h.count));
  // Too many to draw: empty buckets go first, then the smallest.
  const candidates = span.length > rows ? span.filter((b) => b.count > 0) : span;
  const keep = new Set([...candidates].sort((a, b) => b.count - a.count).slice(0, Math.max(0, rows)));
  const shown = span.filter((b) => keep.has(b));
  const max = Math.max(1, ...shown.map((b) => b.count));
  const barWidth = Math.max(1, width - 30);
  return (
    <Box flexDirection="column" width={width}>
      <Line
        segments={[
          { text: 'DIVERTED OVERLAP', bold: true },
          `  ${fmtCount(h.count)} diversions (${fmtRate(perS)}/s) · mean ${mean.toFixed(1)} blocks ${fmtTokens(mean, blockSize)} tok`,
        ]}
      />
      {shown.map((b) => (
        <Line
          key={b.le}
          segments={[
            `  ${pad(b.le === Infinity ? `>${fmtCount(b.from)}` : `≤${fmtCount(b.le)}`, 6)} blk ${pad(b.le === Infinity ? '' : fmtTokens(b.le, blockSize), 6)} tok `,
            { text: b.count > 0 ? bar(b.count, max, barWidth).trimEnd() || '▏' : '', color: 'yellow' },
            ` ${fmtCount(b.count)}`,
          ]}
        />
      ))}
    </Box>
  );
}
