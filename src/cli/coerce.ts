import { usageError } from '../errors/index.js';

/** A yargs coercer for whole-number flags with a lower bound, worded one way everywhere. */
export function wholeNumberAtLeast(flag: string, min: number): (v: number) => number {
  return (v: number) => {
    if (!Number.isInteger(v) || v < min) throw usageError(`--${flag} must be a whole number of at least ${min} (got ${String(v)})`);
    return v;
  };
}
