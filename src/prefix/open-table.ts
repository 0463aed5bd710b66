/**
 * Pieces shared by the open-addressing tables over typed arrays that hold block
 * hashes (the router's prefix index, the simulator's block cache): a table of entry
 * numbers by slot (-1 when free), linear probing, and deletion by backward shift so
 * that no tombstones accumulate.
 */

/**
 * A table bucket for a 52-bit block hash: both halves folded and spread (Fibonacci
 * hashing), so that hashes whose low bits happen to agree do not all land in one
 * probe run.
 */
export function hashBucket(h: number): number {
  const hi = Math.floor(h / 4294967296) >>> 0;
  return Math.imul((h >>> 0) ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 0;
}

/**
 * Free slot `hole` (its entry already taken out) and move later entries of its probe
 * run back into it, keeping every entry reachable from its home slot. `slotOf` is
 * updated for the entries that move; `keys` gives each entry's hash.
 */
export function closeHole(table: Int32Array, slotOf: Int32Array, keys: Float64Array, mask: number, hole: number): void {
  let i = hole;
  table[i] = -1;
  let j = i;
  for (;;) {
    j = (j + 1) & mask;
    const f = table[j]!;
    if (f === -1) return;
    const home = hashBucket(keys[f]!) & mask;
    // Move f back into the hole if its home is not cyclically in (i, j].
    const inRange = i <= j ? home > i && home <= j : home > i || home <= j;
    if (!inRange) {
      table[i] = f;
      slotOf[f] = i;
      table[j] = -1;
      i = j;
    }
  }
}

/**
 * Put entry `e`, whose hash is `h`, in the first free slot of its probe run; `slotOf`
 * remembers the slot for a later closeHole.
 */
export function placeEntry(table: Int32Array, slotOf: Int32Array, mask: number, h: number, e: number): void {
  let i = hashBucket(h) & mask;
  while (table[i] !== -1) i = (i + 1) & mask;
  table[i] = e;
  slotOf[e] = i;
}
