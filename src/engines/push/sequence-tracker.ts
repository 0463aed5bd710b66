/**
 * Sequence numbers of one publisher (one worker's one DP rank): each batch should be
 * the last one plus one (docs/engine-push.md §Sequence and replay).
 */
export type SequenceVerdict =
  /** The first batch seen, or the next one. */
  | { readonly kind: 'in_order' }
  /** Batches were missed: `from`..`to` inclusive are the ones to ask the replay socket for. */
  | { readonly kind: 'gap'; readonly from: number; readonly to: number }
  /** The publisher started over (it restarted): whatever it said before no longer holds. */
  | { readonly kind: 'reset' }
  /** Already seen (a replayed batch overlapping the live stream): apply nothing. */
  | { readonly kind: 'duplicate' };

const IN_ORDER: SequenceVerdict = Object.freeze({ kind: 'in_order' });
const RESET: SequenceVerdict = Object.freeze({ kind: 'reset' });
const DUPLICATE: SequenceVerdict = Object.freeze({ kind: 'duplicate' });

export class SequenceTracker {
  /** The last sequence applied; -1 before the first. */
  last = -1;
  gaps = 0;
  missed = 0;
  resets = 0;

  observe(seq: number): SequenceVerdict {
    const last = this.last;
    if (last < 0 || seq === last + 1) {
      this.last = seq;
      return IN_ORDER;
    }
    if (seq > last + 1) {
      this.gaps++;
      this.missed += seq - last - 1;
      this.last = seq;
      return { kind: 'gap', from: last + 1, to: seq - 1 };
    }
    // Back to the start is a publisher that started over: 0, or 1 for one that numbers from 1
    // (llm-d-inference-sim). Anything else behind us is a batch seen already.
    if (seq === 0 || (seq === 1 && last > 1)) {
      this.resets++;
      this.last = seq;
      return RESET;
    }
    return DUPLICATE;
  }
}
