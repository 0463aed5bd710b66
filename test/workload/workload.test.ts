import { describe, expect, it } from 'vitest';
import { countTokens } from '../../src/prefix/index.js';
import { ArrivalDigest, DEFAULT_WORKLOAD, Workload, meanArrivalRate, systemPrompt } from '../../src/workload/index.js';
import type { Arrival, WorkloadOptions } from '../../src/workload/index.js';

const NO_BURSTS = { burstFactor: 1, burstSeconds: 0, burstEverySeconds: 0 };

function take(w: Workload, n: number): Arrival[] {
  return Array.from({ length: n }, () => w.next());
}

/** Arrivals until time t (seconds). */
function until(w: Workload, t: number): Arrival[] {
  const out: Arrival[] = [];
  for (let a = w.next(); a.at < t; a = w.next()) out.push(a);
  return out;
}

describe('Workload determinism', () => {
  it('the same seed gives the same arrivals, prompts and max_tokens', () => {
    const a = new Workload({ seed: 11, rate: 20 });
    const b = new Workload({ seed: 11, rate: 20 });
    expect(b.systemPrompts).toEqual(a.systemPrompts);
    expect(take(b, 500)).toEqual(take(a, 500));
  });

  it('another seed gives another sequence', () => {
    const a = take(new Workload({ seed: 1 }), 50);
    const b = take(new Workload({ seed: 2 }), 50);
    expect(b.map((x) => x.userMessage)).not.toEqual(a.map((x) => x.userMessage));
    expect(b.map((x) => x.at)).not.toEqual(a.map((x) => x.at));
  });

  it('the digest of two identical sequences matches and changes with any field', () => {
    const seq = take(new Workload({ seed: 5 }), 200);
    const d1 = new ArrivalDigest();
    const d2 = new ArrivalDigest();
    for (const a of seq) d1.add(a);
    for (const a of take(new Workload({ seed: 5 }), 200)) d2.add(a);
    expect(d2.hex()).toBe(d1.hex());
    expect(d1.count).toBe(200);
    const d3 = new ArrivalDigest();
    for (const a of seq) d3.add(a.seq === 100 ? { ...a, maxTokens: a.maxTokens + 1 } : a);
    expect(d3.hex()).not.toBe(d1.hex());
  });
});

describe('Workload distributions', () => {
  it('session families follow Zipf popularity', () => {
    const families = 4;
    const s = 1.1;
    const w = new Workload({ seed: 3, families, zipfS: s, sessions: 16, maxTurns: 1 });
    // maxTurns 1: every arrival opens a new session, so arrivals count sessions.
    const counts = new Array<number>(families).fill(0);
    const n = 40_000;
    for (const a of take(w, n)) counts[a.family]!++;
    const weights = Array.from({ length: families }, (_, k) => 1 / (k + 1) ** s);
    const total = weights.reduce((x, y) => x + y, 0);
    for (let k = 0; k < families; k++) {
      const expected = weights[k]! / total;
      expect(Math.abs(counts[k]! / n - expected)).toBeLessThan(0.01);
    }
    // The hot family carries about half the traffic: the hot-prefix shape the comparison needs.
    expect(counts[0]! / n).toBeGreaterThan(0.45);
  });

  it('zipf 0 is uniform', () => {
    const w = new Workload({ seed: 3, families: 5, zipfS: 0, maxTurns: 1 });
    const counts = new Array<number>(5).fill(0);
    for (const a of take(w, 25_000)) counts[a.family]!++;
    for (const c of counts) expect(Math.abs(c / 25_000 - 0.2)).toBeLessThan(0.015);
  });

  it('arrivals without bursts are Poisson at the configured rate', () => {
    const rate = 50;
    const horizon = 400;
    const arrivals = until(new Workload({ seed: 9, rate, ...NO_BURSTS }), horizon);
    const n = arrivals.length;
    const expected = rate * horizon;
    // Poisson count: standard deviation sqrt(expected); allow 4 of them.
    expect(Math.abs(n - expected)).toBeLessThan(4 * Math.sqrt(expected));
    const gaps = arrivals.slice(1).map((a, i) => a.at - arrivals[i]!.at);
    const mean = gaps.reduce((x, y) => x + y, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((x, g) => x + (g - mean) ** 2, 0) / gaps.length);
    // Exponential gaps: coefficient of variation 1.
    expect(mean).toBeCloseTo(1 / rate, 3);
    expect(sd / mean).toBeGreaterThan(0.95);
    expect(sd / mean).toBeLessThan(1.05);
    expect(gaps.every((g) => g >= 0)).toBe(true);
  });

  it('bursts multiply the rate inside their window and nowhere else', () => {
    const o: Partial<WorkloadOptions> = { seed: 4, rate: 20, burstFactor: 3, burstSeconds: 3, burstEverySeconds: 15 };
    const w = new Workload(o);
    const horizon = 1500;
    const arrivals = until(w, horizon);
    let inBurst = 0;
    for (const a of arrivals) if (a.at % 15 >= 12) inBurst++;
    const outBurst = arrivals.length - inBurst;
    const burstTime = (horizon / 15) * 3;
    const calmTime = horizon - burstTime;
    expect(inBurst / burstTime).toBeGreaterThan(60 * 0.95);
    expect(inBurst / burstTime).toBeLessThan(60 * 1.05);
    expect(outBurst / calmTime).toBeGreaterThan(20 * 0.95);
    expect(outBurst / calmTime).toBeLessThan(20 * 1.05);
    expect(w.rateAt(13)).toBe(60);
    expect(w.rateAt(2)).toBe(20);
    // Mean over a cycle: 20 * (1 + 2 * 3/15) = 28.
    expect(meanArrivalRate({ rate: 20, burstFactor: 3, burstSeconds: 3, burstEverySeconds: 15 })).toBeCloseTo(28, 10);
    expect(Math.abs(arrivals.length / horizon - 28)).toBeLessThan(28 * 0.03);
  });

  it('max_tokens is lognormal around the median and never outside [1, max]', () => {
    const w = new Workload({ seed: 8, outputMedianTokens: 48, outputSigma: 0.5, outputMaxTokens: 100_000, maxTurns: 1 });
    const values = take(w, 20_000).map((a) => a.maxTokens);
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[sorted.length >> 1]!;
    expect(Math.abs(median - 48)).toBeLessThanOrEqual(2);
    const logs = values.map((v) => Math.log(v));
    const mu = logs.reduce((x, y) => x + y, 0) / logs.length;
    const sigma = Math.sqrt(logs.reduce((x, l) => x + (l - mu) ** 2, 0) / logs.length);
    expect(sigma).toBeGreaterThan(0.45);
    expect(sigma).toBeLessThan(0.55);

    const capped = take(new Workload({ seed: 8, outputMedianTokens: 48, outputMaxTokens: 64 }), 5000).map((a) => a.maxTokens);
    expect(Math.max(...capped)).toBe(64);
    expect(Math.min(...capped)).toBeGreaterThanOrEqual(1);
  });

  it('system prompts are exactly the drawn size, within [min, max]', () => {
    const w = new Workload({ seed: 12, families: 8, systemTokensMin: 1000, systemTokensMax: 4000 });
    expect(w.systemTokens).toHaveLength(8);
    for (const [f, tokens] of w.systemTokens.entries()) {
      expect(tokens).toBeGreaterThanOrEqual(1000);
      expect(tokens).toBeLessThanOrEqual(4000);
      expect(countTokens(w.systemPrompts[f]!)).toBe(tokens);
    }
    // Families differ from the first block on, so each is its own prefix.
    const starts = new Set(w.systemPrompts.map((p) => p.slice(0, 64)));
    expect(starts.size).toBe(8);
    for (const t of [30, 31, 257, 1024]) expect(countTokens(systemPrompt(1, 0, t))).toBe(t);
  });

  it('sessions run their turns in order, end on the turn marked last, and stay within the open count', () => {
    const w = new Workload({ seed: 6, sessions: 10, maxTurns: 4 });
    const turns = new Map<number, number[]>();
    const lastSeen = new Map<number, boolean>();
    const familyOf = new Map<number, number>();
    let maxOpen = 0;
    const open = new Set<number>();
    for (const a of take(w, 5000)) {
      expect(lastSeen.get(a.session)).not.toBe(true);
      const list = turns.get(a.session) ?? [];
      list.push(a.turn);
      turns.set(a.session, list);
      open.add(a.session);
      maxOpen = Math.max(maxOpen, open.size);
      if (a.last) {
        lastSeen.set(a.session, true);
        open.delete(a.session);
      }
      // A session keeps its system prompt: that is what makes its turns share a prefix.
      expect(familyOf.get(a.session) ?? a.family).toBe(a.family);
      familyOf.set(a.session, a.family);
    }
    for (const [session, list] of turns) {
      expect(list).toEqual(list.map((_, i) => i));
      if (lastSeen.get(session)) expect(list.length).toBeLessThanOrEqual(4);
    }
    expect(maxOpen).toBeLessThanOrEqual(10);
  });

  it('keeps the defaults the embedded fleet builds on', () => {
    expect(DEFAULT_WORKLOAD).toMatchObject({ families: 4, systemTokensMin: 1000, systemTokensMax: 4000, burstFactor: 3 });
    expect(Object.isFrozen(DEFAULT_WORKLOAD)).toBe(true);
  });
});

describe('Workload pasted documents', () => {
  const docPrefix = 'Here is the document:\n';
  it.each([
    { name: 'off by default', opening: 0, later: 0, openingWith: 0, laterWith: 0 },
    { name: 'every opening, no later turn', opening: 1, later: 0, openingWith: 1, laterWith: 0 },
    { name: 'every turn', opening: 1, later: 1, openingWith: 1, laterWith: 1 },
  ])('$name', ({ opening, later, openingWith, laterWith }) => {
    const arrivals = take(new Workload({ ...DEFAULT_WORKLOAD, openingAttachmentShare: opening, attachmentShare: later }), 400);
    const openings = arrivals.filter((a) => a.turn === 0);
    const laters = arrivals.filter((a) => a.turn > 0);
    expect(openings.length).toBeGreaterThan(20);
    expect(laters.length).toBeGreaterThan(20);
    const share = (list: Arrival[]) => list.filter((a) => a.userMessage.startsWith(docPrefix)).length / list.length;
    expect(share(openings)).toBe(openingWith);
    expect(share(laters)).toBe(laterWith);
  });

  it('a share between 0 and 1 pastes about that share', () => {
    const arrivals = take(new Workload({ ...DEFAULT_WORKLOAD, attachmentShare: 0.3 }), 4000).filter((a) => a.turn > 0);
    const share = arrivals.filter((a) => a.userMessage.startsWith(docPrefix)).length / arrivals.length;
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.35);
  });

  it('documents are lognormal around the median and never above the cap', () => {
    const w = new Workload({
      ...DEFAULT_WORKLOAD,
      openingAttachmentShare: 1,
      attachmentShare: 1,
      attachmentMedianTokens: 800,
      attachmentSigma: 1,
      attachmentMaxTokens: 3000,
    });
    // Documents draw from their own stream, so the same workload without them sends the same questions.
    const questions = take(new Workload(DEFAULT_WORKLOAD), 600);
    const sizes = take(w, 600)
      .map((a, i) => {
        expect(a.userMessage.endsWith(questions[i]!.userMessage)).toBe(true);
        return countTokens(a.userMessage) - countTokens(questions[i]!.userMessage);
      })
      .sort((a, b) => a - b);
    const median = sizes[sizes.length >> 1]!;
    expect(median).toBeGreaterThan(600);
    expect(median).toBeLessThan(1050);
    expect(sizes[sizes.length - 1]).toBeLessThanOrEqual(3000 + 2);
    expect(sizes.filter((n) => n >= 2990).length).toBeGreaterThan(0);
  });

  it('pasting documents changes no arrival time, session, turn or max_tokens', () => {
    const strip = (a: Arrival) => ({ at: a.at, session: a.session, turn: a.turn, family: a.family, maxTokens: a.maxTokens });
    const plain = take(new Workload(DEFAULT_WORKLOAD), 300).map(strip);
    const pasted = take(new Workload({ ...DEFAULT_WORKLOAD, openingAttachmentShare: 1, attachmentShare: 0.5 }), 300).map(strip);
    expect(pasted).toEqual(plain);
  });
});

describe('Workload session ramp', () => {
  it.each([
    { ramp: 0, at: [5, 30, 90], most: [400, 400, 400] },
    { ramp: 90, at: [5, 30, 90], most: [23, 134, 400] },
  ])('with sessionRampSeconds $ramp, conversations open at $at s are at most $most', ({ ramp, at, most }) => {
    const o = { ...NO_BURSTS, rate: 16, sessions: 400, maxTurns: 12, sessionRampSeconds: ramp };
    const arrivals = until(new Workload(o), 120);
    at.forEach((t, i) => {
      const upTo = arrivals.filter((a) => a.at <= t);
      const opened = new Set(upTo.map((a) => a.session)).size;
      const ended = upTo.filter((a) => a.last).length;
      expect(opened - ended).toBeLessThanOrEqual(most[i]!);
      // Without a ramp, nearly every early arrival opens a conversation; with it, the share falls to a steady one.
      if (ramp === 0 && t === 5) expect(opened).toBeGreaterThan(60);
    });
    // In the first 10 s, without a ramp four arrivals in five open a conversation; with it, about one in four.
    const early = arrivals.filter((a) => a.at <= 10);
    const openings = early.filter((a) => a.turn === 0).length / early.length;
    if (ramp > 0) expect(openings).toBeLessThan(0.35);
    else expect(openings).toBeGreaterThan(0.75);
  });
});
