export interface Percentiles {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  mean: number | null;
  max: number | null;
  count: number;
}

/**
 * Nearest-rank percentiles (the value at rank ceil(q·n)), so every reported figure
 * is a latency some request actually saw. An array is copied; a Float64Array is sorted in place.
 */
export function percentiles(values: number[] | Float64Array): Percentiles {
  const n = values.length;
  if (n === 0) return { p50: null, p90: null, p99: null, mean: null, max: null, count: 0 };
  const sorted = values instanceof Float64Array ? values.sort() : Float64Array.from(values).sort();
  const at = (q: number): number => sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), mean: sum / n, max: sorted[n - 1]!, count: n };
}
