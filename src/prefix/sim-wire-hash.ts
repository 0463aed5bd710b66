/**
 * How the simulator writes its 52-bit block hashes (blockHashes) as the engines' 64-bit
 * ones in KV events: shifted left by SIM_WIRE_SHIFT bits, so that about half of them
 * carry the top bit, the case that separates a signed from an unsigned reading
 * (docs/simulator.md §Push channels). A router that keys requests for a simulated
 * fleet's events applies the same mapping to its own block hashes.
 */
export const SIM_WIRE_SHIFT = 12;

const TWO20 = 0x10_0000;

/** The 64-bit wire value of a simulator block hash, as its high and low 32-bit words. */
export function simWireWords(hash: number): { hi: number; lo: number } {
  // hash < 2^52, so hash << 12 < 2^64: the top 32 bits are hash / 2^20, the low ones its last 20 bits shifted.
  const hi = Math.floor(hash / TWO20) >>> 0;
  const lo = ((hash % TWO20) << SIM_WIRE_SHIFT) >>> 0;
  return { hi, lo };
}
