import { DASH, fmtDuration, fmtSeconds } from './format.js';
import type { QuantileEstimate } from './view-model.js';

/**
 * A latency quantile in seconds, as the console and `top --once` show it: "1.2s", or
 * "> 30s" when it lies above the histogram's last finite bound, because a bound is all
 * the histogram knows there and "30.0s" would read as a measurement; DASH when unknown.
 */
export function fmtQuantileSeconds(q: QuantileEstimate | null | undefined): string {
  if (q === null || q === undefined) return DASH;
  return q.lowerBound ? `> ${fmtBoundSeconds(q.value)}` : fmtSeconds(q.value);
}

/** A bucket bound is exact: 30 → "30s", 2.5 → "2.5s", 0.4 → "400ms", 400 → "6m40s". */
function fmtBoundSeconds(s: number): string {
  if (s < 1) return `${Number((s * 1000).toFixed(1))}ms`;
  if (s < 60) return `${Number(s.toFixed(1))}s`;
  return fmtDuration(s);
}
