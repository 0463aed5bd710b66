import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import type { Arrival } from './workload.js';

/**
 * A running SHA-256 over the arrivals a run dispatched, in order. Two runs with the
 * same digest offered the router the same requests at the same moments; the prompt
 * history of later turns is not included because it holds the replies, which depend
 * on where earlier turns were routed.
 */
export class ArrivalDigest {
  private readonly hash: Hash = createHash('sha256');
  count = 0;

  add(a: Arrival): void {
    this.count++;
    // Microsecond times: the arrival process is what must match, not float noise.
    this.hash.update(`${a.seq}|${a.at.toFixed(6)}|${a.session}|${a.turn}|${a.family}|${a.maxTokens}|${a.userMessage}\n`);
  }

  /** Hex digest of what was added so far (the running hash stays usable). */
  hex(): string {
    return this.hash.copy().digest('hex');
  }
}
