/**
 * A line through a set of points by the medians of Theil–Sen, over a subset of its
 * pairs: the points are ordered by x and each in the lower half is paired with the one
 * half the order away, so each pair spans about half the x range and each point is in
 * one pair. The slope is the median of those n/2 slopes, the intercept the median of
 * y − slope·x. Fewer than a quarter of the points may be anything at all (a first request
 * that loaded a kernel, a sample taken while the engine was busy with someone else's
 * prompt) without moving the line far, which a least-squares fit cannot promise; and the
 * fit costs a sort of n points, not of the n·(n−1)/2 slopes of every pair (128 points:
 * 0.67 ms for every pair, docs/routing.md §Learned prefill rate).
 */
export interface Line {
  readonly slope: number;
  readonly intercept: number;
}

/**
 * The line through the first `n` points of `xs`/`ys`, or null when no pair has two
 * distinct x values. `order` and `scratch` hold at least `n` entries each and are
 * reused between calls, so that a fit allocates nothing.
 */
export function theilSen(xs: Float64Array, ys: Float64Array, n: number, order: Uint32Array, scratch: Float64Array): Line | null {
  if (n < 2) return null;
  const idx = order.subarray(0, n);
  for (let i = 0; i < n; i++) idx[i] = i;
  idx.sort((a, b) => xs[a]! - xs[b]! || a - b);
  const half = n >> 1;
  let m = 0;
  for (let i = 0; i < half; i++) {
    const a = idx[i]!;
    const b = idx[n - half + i]!;
    const dx = xs[b]! - xs[a]!;
    if (dx !== 0) scratch[m++] = (ys[b]! - ys[a]!) / dx;
  }
  if (m === 0) return null;
  const slope = median(scratch, m);
  for (let i = 0; i < n; i++) scratch[i] = ys[i]! - slope * xs[i]!;
  return { slope, intercept: median(scratch, n) };
}

/** The median of the first `n` entries of `a`, which it sorts in place. */
function median(a: Float64Array, n: number): number {
  const s = a.subarray(0, n).sort();
  const mid = n >> 1;
  return n % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
