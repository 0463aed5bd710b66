/** A burst pattern: the rate is multiplied by `factor` for `seconds` out of every `everySeconds`. */
export interface BurstPattern {
  factor: number;
  seconds: number;
  everySeconds: number;
}

export const NO_BURSTS: BurstPattern = { factor: 1, seconds: 0, everySeconds: 0 };

/**
 * `3x3s/15s` (three times the rate for 3 s of every 15 s), `2x5/60`, or `off`.
 * Returns undefined when the text is not a pattern or the burst is longer than its period.
 */
export function parseBurst(text: string): BurstPattern | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'off' || t === 'none' || t === '0') return NO_BURSTS;
  const m = /^(\d+(?:\.\d+)?)x(\d+(?:\.\d+)?)s?\/(\d+(?:\.\d+)?)s?$/.exec(t);
  if (!m) return undefined;
  const factor = Number(m[1]);
  const seconds = Number(m[2]);
  const everySeconds = Number(m[3]);
  if (factor <= 0 || everySeconds <= 0 || seconds > everySeconds) return undefined;
  return { factor, seconds, everySeconds };
}
