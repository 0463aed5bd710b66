import { usageError } from '../errors/index.js';

/** A yargs coercer for whole-number flags with a lower bound, worded one way everywhere. */
export function wholeNumberAtLeast(flag: string, min: number): (v: number) => number {
  return (v: number) => {
    if (!Number.isInteger(v) || v < min) throw usageError(`--${flag} must be a whole number of at least ${min} (got ${String(v)})`);
    return v;
  };
}

/** A yargs coercer for whole-number flags within [min, max]. */
export function wholeNumberBetween(flag: string, min: number, max: number): (v: number) => number {
  return (v: number) => {
    if (!Number.isInteger(v) || v < min || v > max) throw usageError(`--${flag} must be a whole number from ${min} to ${max} (got ${String(v)})`);
    return v;
  };
}
