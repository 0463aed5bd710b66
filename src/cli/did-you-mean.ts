/**
 * Suggest the closest known name for a misspelt flag, rc key, env variable or enum
 * value. Optimal string alignment distance (Levenshtein plus adjacent swaps), because
 * the typical slip is a dropped, doubled or swapped letter: `--worker-queue-limt`,
 * `cache_awrae`.
 */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  // The distance table costs |input| × |candidate|: a pasted blob (a 4 MiB rc value)
  // would take seconds and gigabytes to be told it is not a flag name. No name we
  // suggest is anywhere near this long, so nothing longer can be one slip away.
  if (input.length > MAX_GUESSABLE_LENGTH) return undefined;
  const needle = input.toLowerCase();
  // Short names tolerate one slip, long ones proportionally more, never a rewrite.
  const budget = Math.max(1, Math.min(3, Math.floor(needle.length / 4)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = distance(needle, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best !== undefined && bestDistance <= budget) return best;
  // A unique candidate that extends what was typed (`--worker-queue`) is also a good guess.
  const extending = [...candidates].filter((c) => c.toLowerCase().startsWith(needle) && needle.length >= 4);
  return extending.length === 1 ? extending[0] : undefined;
}

/** Longer than any setting, env variable or enum value routerctl has, with room for slips. */
export const MAX_GUESSABLE_LENGTH = 64;

/** Optimal string alignment distance, keeping only the three rows the recurrence reads. */
function distance(a: string, b: string): number {
  const cols = b.length + 1;
  let twoBack = new Array<number>(cols).fill(0);
  let prev = Array.from({ length: cols }, (_, j) => j);
  let row = new Array<number>(cols).fill(0);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, twoBack[j - 2]! + 1);
      row[j] = v;
    }
    [twoBack, prev, row] = [prev, row, twoBack];
  }
  return prev[b.length]!;
}
