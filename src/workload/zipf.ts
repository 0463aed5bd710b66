import type { Rng } from '../sim/index.js';

/** Draws ranks 0..n-1 with P(k) ∝ 1 / (k+1)^s, by inverting the cumulative table. */
export class Zipf {
  private readonly cdf: Float64Array;

  constructor(n: number, s: number) {
    this.cdf = new Float64Array(n);
    let acc = 0;
    for (let k = 0; k < n; k++) {
      acc += 1 / (k + 1) ** s;
      this.cdf[k] = acc;
    }
    for (let k = 0; k < n; k++) this.cdf[k]! /= acc;
  }

  sample(rng: Rng): number {
    const u = rng.next();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
