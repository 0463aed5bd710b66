import { usageError } from '../errors/index.js';

// Every command's flag coercers live here so a bad value reads the same way whichever
// command was given it: `--flag must be <what it takes> (got <value>)`, exit 2.

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
    if (!Number.isInteger(v) || v < min || v > max)
      throw usageError(`--${flag} must be a whole number from ${min} to ${max} (got ${String(v)})`);
    return v;
  };
}

/** A yargs coercer for whole-number flags of any sign (seeds). */
export function wholeNumber(flag: string): (v: number) => number {
  return (v: number) => {
    if (!Number.isInteger(v)) throw usageError(`--${flag} must be a whole number (got ${String(v)})`);
    return v;
  };
}

/**
 * A yargs coercer for a whole-number flag that one value turns off instead (SGLang's
 * -1 for "no chunking"), so the sentinel is accepted and named in the message.
 */
export function wholeNumberAtLeastOrOff(flag: string, min: number, off: number): (v: number) => number {
  return (v: number) => {
    if (v !== off && !(Number.isInteger(v) && v >= min)) {
      throw usageError(`--${flag} must be ${off} (off) or a whole number of at least ${min} (got ${String(v)})`);
    }
    return v;
  };
}

/** A yargs coercer for a finite number strictly above `min` (rates, speed-ups). */
export function numberGreaterThan(flag: string, min: number): (v: number) => number {
  return (v: number) => {
    if (!Number.isFinite(v) || v <= min) throw usageError(`--${flag} must be a number greater than ${min} (got ${String(v)})`);
    return v;
  };
}

/** A yargs coercer for a finite number of at least `min` (exponents where `min` itself means something). */
export function numberAtLeast(flag: string, min: number): (v: number) => number {
  return (v: number) => {
    if (!Number.isFinite(v) || v < min) throw usageError(`--${flag} must be a number of at least ${min} (got ${String(v)})`);
    return v;
  };
}

/** A yargs coercer for a TCP port to listen on; 0 lets the system pick a free one. */
export function portNumber(flag: string): (v: number) => number {
  return (v: number) => {
    if (!Number.isInteger(v) || v < 0 || v > 65535) throw usageError(`--${flag} must be a port number from 0 to 65535 (got ${String(v)})`);
    return v;
  };
}
