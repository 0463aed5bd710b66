import { Box } from 'ink';
import type { ReactElement } from 'react';
import { bar, fmtCount, fmtPct, fmtRate, pad } from '../../fleet/index.js';
import type { DecisionLabel, FleetView } from '../../fleet/index.js';
import { DECISION_LABELS } from '../../fleet/index.js';
import { Line } from './Line.js';
import type { Tone } from './Line.js';

export const DECISION_TONES: Record<DecisionLabel, Tone> = {
  cache_hit: 'green',
  cache_miss: 'blue',
  cache_worker_queued: 'yellow',
  all_queued: 'red',
};
const SHORT: Record<DecisionLabel, string> = {
  cache_hit: 'hit',
  cache_miss: 'miss',
  cache_worker_queued: 'queued',
  all_queued: 'all_queued',
};

/**
 * The cache-aware decision mix: per-second rates and totals per label, and the cache
 * hit ratio computed without all_queued (a saturated fleet keeps affinity for lack of
 * anywhere better; counting that as a hit would flatter the routing). `compact` is two
 * lines; `full` a six-line table with shares.
 */
export function DecisionMix({ view, mode, width }: { view: FleetView; mode: 'full' | 'compact'; width: number }): ReactElement | null {
  const d = view.decisions;
  const r = view.decisionsPerS;
  if (!d) return null;
  const ratio = `hit ratio ${fmtPct(view.hitRatioRecent)} now · ${fmtPct(view.hitRatio)} overall (all_queued left out)`;
  const failures = `failures ${fmtCount(view.selectionFailuresTotal)} (${fmtRate(view.selectionFailuresPerS)}/s)`;
  const partial = view.partialDiversionsTotal !== null ? ` · partial diversions ${fmtCount(view.partialDiversionsTotal)}` : '';
  if (mode === 'compact') {
    return (
      <Box flexDirection="column" width={width}>
        <Line
          segments={[
            { text: 'decisions/s', bold: true },
            ...DECISION_LABELS.flatMap((k) => [`  ${SHORT[k]} `, { text: fmtRate(r?.[k]), color: DECISION_TONES[k] }]),
            `  · ${failures}`,
          ]}
        />
        <Line segments={[ratio, ` · totals ${DECISION_LABELS.map((k) => fmtCount(d[k])).join('/')}${partial}`]} />
      </Box>
    );
  }
  const total = DECISION_LABELS.reduce((a, k) => a + d[k], 0);
  const barWidth = Math.max(0, Math.min(20, width - 44));
  return (
    <Box flexDirection="column" width={width}>
      <Line
        segments={[
          { text: `${pad('DECISIONS', 20)} ${pad('total', 8, 'right')} ${pad('/s', 7, 'right')} ${pad('share', 7, 'right')}`, bold: true },
        ]}
      />
      {DECISION_LABELS.map((k) => (
        <Line
          key={k}
          segments={[
            { text: pad(k, 20), color: DECISION_TONES[k] },
            ` ${pad(fmtCount(d[k]), 8, 'right')} ${pad(fmtRate(r?.[k]), 7, 'right')} ${pad(total > 0 ? fmtPct(d[k] / total) : '–', 7, 'right')} `,
            { text: bar(d[k], total, barWidth).trimEnd(), color: DECISION_TONES[k] },
          ]}
        />
      ))}
      <Line segments={[ratio, ` · ${failures}${partial}`]} />
    </Box>
  );
}
