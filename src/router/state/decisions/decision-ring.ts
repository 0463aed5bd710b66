import type { AdminDecision, AdminDecisionCandidate } from '../../../contract/index.js';

/** Candidates (prefix owners) kept per decision: the deepest ones; more are counted, not kept. */
export const MAX_CANDIDATES = 8;

/** What the gate made of one prefix owner when the request was routed. */
export type GateVerdict = 'admitted' | 'gated' | 'unknown';

/** One owner as the recorder saw it: its fresh waiting count (-1: none), the gate's verdict, its predicted TTFT (-1: none). */
export interface OwnerVerdict {
  readonly waiting: number;
  readonly verdict: GateVerdict;
  readonly predictedMs: number;
}

/** One prefix owner as the selection saw it. */
interface Candidate {
  worker: string;
  blocks: number;
  /** Fresh waiting count; -1 when unknown. */
  waiting: number;
  verdict: GateVerdict;
  /** The TTFT it was predicted to give the request, ms; -1 while its rate was unknown. */
  predictedMs: number;
}

/**
 * One routed request's record. Records are allocated once, when the ring is made,
 * and overwritten in place: the ring's memory is fixed whatever the traffic.
 */
interface Slot extends DecisionInput {
  seq: number;
  candidates: Candidate[];
  candidateCount: number;
  /** Owners beyond MAX_CANDIDATES. */
  moreCandidates: number;
  retriedTo: string | null;
  status: number;
  /** -1: the engine did not report it (or not yet). */
  cachedTokens: number;
  ttftMs: number;
  durationMs: number;
}

/** What a selection recorded, handed to `record`. */
export interface DecisionInput {
  id: string;
  atMs: number;
  policy: string;
  decision: string | null;
  reason: string;
  inputTokens: number;
  queryBlocks: number;
  selected: string;
  gateRejected: number;
  admissionRejected: number;
  fleetAllQueued: boolean;
  divertedBlocks: number;
  partialDiversion: boolean;
  /** The queue gate's rule in force at the decision (QueueGate.rule), null with the gate off. */
  gateRule: string | null;
  /** The selected worker's predicted TTFT (this request's prefill at its learnt rate, what is pending at its learnt weight), ms; -1 while it has no estimate. */
  predictedTtftMs: number;
  /** Blocks the selected worker held, and the deepest owner with its blocks (ownerSummary). */
  selectedBlocks: number;
  best: string | null;
  bestBlocks: number;
}

/**
 * The selected worker's match and the best owner among a selection's prefix owners:
 * the deepest, the lowest id among equals, and the selected worker when it is tied
 * with the deepest. One rule for the record, the response header and the metrics.
 */
export function ownerSummary(
  owners: ReadonlyArray<{ readonly worker: { readonly id: string }; readonly blocks: number }>,
  selected: string,
): Pick<DecisionInput, 'selectedBlocks' | 'best' | 'bestBlocks'> {
  let selectedBlocks = 0;
  let best: string | null = null;
  let bestBlocks = 0;
  for (const o of owners) {
    const id = o.worker.id;
    if (id === selected) selectedBlocks = o.blocks;
    if (o.blocks > bestBlocks || (o.blocks === bestBlocks && best !== null && id < best)) {
      best = id;
      bestBlocks = o.blocks;
    }
  }
  if (selectedBlocks > 0 && selectedBlocks === bestBlocks) best = selected;
  return { selectedBlocks, best, bestBlocks };
}

/** Filters of GET /admin/decisions. */
export interface DecisionFilter {
  worker?: string;
  decision?: string;
  /** Only records with a sequence number above this. */
  since?: number;
  requestId?: string;
  limit?: number;
}

/** Bytes one slot costs: 872 measured on Node 20 with the record and its candidates, plus a request id string (docs/decisions.md §Memory). */
export const SLOT_BYTES = 930;

/**
 * The last N routing decisions (docs/decisions.md §Decision record), in a ring of
 * records allocated at start (`--decision-log-size`). A selection fills the next
 * record; the request's end completes it (status, the engine's cached tokens, TTFT).
 * A record overwritten before its request ends is simply not completed: the
 * completion finds a newer sequence number in the slot and does nothing.
 */
export class DecisionRing {
  readonly #slots: Slot[];
  #next = 0;
  #seq = 0;

  constructor(readonly capacity: number) {
    this.#slots = Array.from({ length: capacity }, () => ({
      seq: 0,
      id: '',
      atMs: 0,
      policy: '',
      decision: null,
      reason: '',
      inputTokens: 0,
      queryBlocks: 0,
      selected: '',
      selectedBlocks: 0,
      best: null,
      bestBlocks: 0,
      candidates: Array.from({ length: MAX_CANDIDATES }, () => ({
        worker: '',
        blocks: 0,
        waiting: -1,
        verdict: 'unknown' as GateVerdict,
        predictedMs: -1,
      })),
      candidateCount: 0,
      moreCandidates: 0,
      gateRejected: 0,
      admissionRejected: 0,
      fleetAllQueued: false,
      divertedBlocks: 0,
      partialDiversion: false,
      gateRule: null,
      predictedTtftMs: -1,
      retriedTo: null,
      status: 0,
      cachedTokens: -1,
      ttftMs: -1,
      durationMs: -1,
    }));
  }

  /** Decisions recorded since start. */
  get total(): number {
    return this.#seq;
  }

  /** The fixed memory the ring holds, in bytes (an estimate per slot, measured once). */
  get memoryBytes(): number {
    return this.capacity * SLOT_BYTES;
  }

  /**
   * Record a selection; `owners` are the prefix owners the selection saw, with a
   * verdict for each. Returns the record's sequence number, for `complete`.
   */
  record<W extends { readonly id: string }>(
    d: DecisionInput,
    owners: ReadonlyArray<{ readonly worker: W; readonly blocks: number }>,
    verdict: (worker: W, blocks: number) => OwnerVerdict,
  ): number {
    if (this.capacity === 0) return 0;
    const s = this.#slots[this.#next]!;
    this.#next = (this.#next + 1) % this.capacity;
    s.seq = ++this.#seq;
    s.id = d.id;
    s.atMs = d.atMs;
    s.policy = d.policy;
    s.decision = d.decision;
    s.reason = d.reason;
    s.inputTokens = d.inputTokens;
    s.queryBlocks = d.queryBlocks;
    s.selected = d.selected;
    s.gateRejected = d.gateRejected;
    s.admissionRejected = d.admissionRejected;
    s.fleetAllQueued = d.fleetAllQueued;
    s.divertedBlocks = d.divertedBlocks;
    s.partialDiversion = d.partialDiversion;
    s.gateRule = d.gateRule;
    s.predictedTtftMs = d.predictedTtftMs;
    s.selectedBlocks = d.selectedBlocks;
    s.best = d.best;
    s.bestBlocks = d.bestBlocks;
    s.retriedTo = null;
    s.status = 0;
    s.cachedTokens = -1;
    s.ttftMs = -1;
    s.durationMs = -1;
    // The deepest owners, deepest first.
    let n = 0;
    for (const o of owners) {
      const id = o.worker.id;
      // Kept: the deepest few, deepest first (an insertion into a short sorted list).
      let at: number;
      if (n < MAX_CANDIDATES) at = n++;
      else if (o.blocks > s.candidates[MAX_CANDIDATES - 1]!.blocks) at = MAX_CANDIDATES - 1;
      else continue;
      const v = verdict(o.worker, o.blocks);
      const c = s.candidates[at]!;
      c.worker = id;
      c.blocks = o.blocks;
      c.waiting = v.waiting;
      c.verdict = v.verdict;
      c.predictedMs = v.predictedMs;
      for (; at > 0 && s.candidates[at - 1]!.blocks < c.blocks; at--) {
        s.candidates[at] = s.candidates[at - 1]!;
        s.candidates[at - 1] = c;
      }
    }
    s.candidateCount = n;
    s.moreCandidates = Math.max(0, owners.length - n);
    return s.seq;
  }

  /** The request a record belongs to went on to another worker (a retry after a failure). */
  retried(seq: number, to: string): void {
    const s = this.#find(seq);
    if (s) s.retriedTo = to;
  }

  /** The request ended: its status, and what the engine said it reused. */
  complete(seq: number, status: number, cachedTokens: number, ttftMs: number, durationMs: number): void {
    const s = this.#find(seq);
    if (!s) return;
    s.status = status;
    s.cachedTokens = cachedTokens;
    s.ttftMs = ttftMs;
    s.durationMs = durationMs;
  }

  /** Records matching the filter, oldest first, at most `limit` (the newest ones). */
  query(f: DecisionFilter = {}): AdminDecision[] {
    const out: AdminDecision[] = [];
    const limit = f.limit ?? this.capacity;
    // Newest first, then reversed: the newest `limit` matches.
    for (let i = 1; i <= this.capacity && out.length < limit; i++) {
      const s = this.#slots[(this.#next - i + this.capacity * 2) % this.capacity]!;
      if (s.seq === 0) break;
      if (f.since !== undefined && s.seq <= f.since) break;
      if (f.requestId !== undefined && s.id !== f.requestId) continue;
      if (f.decision !== undefined && (s.decision ?? s.reason) !== f.decision) continue;
      if (f.worker !== undefined && s.selected !== f.worker && s.retriedTo !== f.worker) continue;
      out.push(toJson(s));
    }
    return out.reverse();
  }

  #find(seq: number): Slot | undefined {
    if (seq <= 0 || seq <= this.#seq - this.capacity) return undefined;
    const s = this.#slots[(seq - 1) % this.capacity]!;
    return s.seq === seq ? s : undefined;
  }
}

function toJson(s: Slot): AdminDecision {
  const candidates: AdminDecisionCandidate[] = [];
  for (let i = 0; i < s.candidateCount; i++) {
    const c = s.candidates[i]!;
    candidates.push({
      worker: c.worker,
      matched_blocks: c.blocks,
      waiting: c.waiting < 0 ? null : c.waiting,
      gate: c.verdict,
      predicted_ttft_ms: c.predictedMs < 0 ? null : Math.round(c.predictedMs * 10) / 10,
    });
  }
  return {
    seq: s.seq,
    request_id: s.id,
    at_ms: s.atMs,
    policy: s.policy,
    decision: s.decision,
    reason: s.reason,
    input_tokens: s.inputTokens,
    query_blocks: s.queryBlocks,
    worker: s.selected,
    matched_blocks: s.selectedBlocks,
    best_worker: s.best,
    best_matched_blocks: s.bestBlocks,
    candidates,
    more_candidates: s.moreCandidates,
    gate_rejected: s.gateRejected,
    admission_rejected: s.admissionRejected,
    fleet_all_queued: s.fleetAllQueued,
    diverted_blocks: s.divertedBlocks,
    partial_diversion: s.partialDiversion,
    gate_rule: s.gateRule,
    predicted_ttft_ms: s.predictedTtftMs < 0 ? null : Math.round(s.predictedTtftMs * 10) / 10,
    retried_to: s.retriedTo,
    status: s.status === 0 ? null : s.status,
    cached_tokens: s.cachedTokens < 0 ? null : s.cachedTokens,
    ttft_ms: s.ttftMs < 0 ? null : Math.round(s.ttftMs * 10) / 10,
    duration_ms: s.durationMs < 0 ? null : Math.round(s.durationMs * 10) / 10,
  };
}
