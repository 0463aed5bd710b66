import { describe, expect, it } from 'vitest';
import { heldOutOutcomes, recommend, recommendationLines, seedSamples, traceWindows } from '../../src/bench/recommend/index.js';
import type { RankedConfiguration, SampleOutcome } from '../../src/bench/recommend/index.js';
import type { TraceRequest } from '../../src/workload/index.js';

/**
 * `bench compare --recommend`'s ranking (docs/bench.md §Recommend), on outcomes made
 * by hand: pick on samples 1–3, check on 4–6; a lead counts only beyond the spread.
 */
const ROLES = ['pick', 'pick', 'pick', 'check', 'check', 'check'] as const;

/** 100 requests, `good` of them within the objective, every one finished at `p99` ms or less. */
const outcome = (good: number, p99 = 1000, shed = 0): SampleOutcome => ({
  requests: 100,
  good,
  shed,
  ttftMs: Array.from({ length: 100 }, (_, i) => (i < 98 ? 100 : p99)),
});
const config = (letter: string, gate: boolean, goods: number[], p99s: number[] = goods.map(() => 1000)): RankedConfiguration => ({
  letter,
  label: gate ? `--worker-queue-limit ${letter}` : '(defaults)',
  gate,
  outcomes: goods.map((g, i) => outcome(g, p99s[i])),
});

describe('recommend', () => {
  it('picks the best goodput, states its lead and spread, and the held-out samples agree', () => {
    const r = recommend([config('A', false, [90, 91, 92, 90, 91, 92]), config('B', true, [95, 96, 97, 95, 96, 97])], ROLES);
    expect(r.pick).toMatchObject({
      letter: 'B',
      lead: { over: 'A', goodput_points: 5, goodput_points_min: 5, goodput_points_max: 5, clear: true },
    });
    expect(r.configurations[1]!.pick).toMatchObject({ goodput: 0.96, goodput_min: 0.95, goodput_max: 0.97, rank: 1 });
    expect(r.gate).toMatchObject({ advice: 'on', gate_off_best: 'A' });
    expect(r.check).toMatchObject({ best: 'B', pick_rank: 1, lead_over_pick: null, agrees: true });
    expect(r.verdict).toBe('holds');
  });

  it('keeps the gate off when the best gate leads the best without it only within the spread', () => {
    // B is ahead pooled (+1 point), but A's best picking sample beats B's worst.
    const r = recommend([config('A', false, [90, 95, 92, 90, 95, 92]), config('B', true, [93, 96, 91, 93, 96, 91])], ROLES);
    expect(r.pick.letter).toBe('B');
    expect(r.gate).toMatchObject({ advice: 'off', gate_off_best: 'A', lead_over_gate_off: { goodput_points: 1, clear: false } });
    const text = recommendationLines(r, { kind: 'trace windows', pick: '1–3', check: '4–6' }, 2000).join('\n');
    expect(text).toMatch(/^gate: keep --worker-queue-limit off: the best gate's lead over A \(\(defaults\)\) is within the spread/m);
  });

  it('says what --admission slo shed and the goodput of the admitted beside the goodput of all', () => {
    const shedding: RankedConfiguration = {
      letter: 'B',
      label: '--admission slo --ttft-slo-ms 2000',
      gate: false,
      outcomes: [80, 80, 80, 85, 85, 85].map((g) => outcome(g, 1000, 15)),
    };
    const r = recommend([config('A', false, [50, 50, 50, 50, 50, 50]), shedding], ROLES);
    expect(r.configurations[1]!.pick).toMatchObject({ goodput: 0.8, shed: 45, goodput_admitted: 0.9412 });
    expect(r.configurations[0]!.pick).toMatchObject({ shed: 0, goodput_admitted: 0.5 });
    const text = recommendationLines(r, { kind: 'trace windows', pick: '1–3', check: '4–6' }, 2000).join('\n');
    expect(text).toMatch(
      /^B: --admission slo shed 45 picking and 45 held-out requests; goodput of the admitted 94\.1% picking, 100\.0% held out$/m,
    );
    expect(text).not.toMatch(/^A: --admission/m);
  });

  it('keeps the gate off when the best configuration has none; asks for one when every configuration has a gate', () => {
    expect(recommend([config('A', false, [99, 99, 99, 99, 99, 99]), config('B', true, [90, 90, 90, 90, 90, 90])], ROLES).gate.advice).toBe(
      'off',
    );
    const gated = recommend([config('A', true, [99, 99, 99, 99, 99, 99]), config('B', true, [90, 90, 90, 90, 90, 90])], ROLES);
    expect(gated.gate).toEqual({ advice: null, gate_off_best: null, lead_over_gate_off: null });
  });

  it('says the traffic is too short to tell when the held-out samples rank another first beyond their spread', () => {
    const r = recommend([config('A', false, [95, 95, 95, 80, 80, 80]), config('B', false, [90, 90, 90, 92, 93, 94])], ROLES);
    expect(r.pick.letter).toBe('A');
    expect(r.check).toMatchObject({ best: 'B', pick_rank: 2, agrees: false, lead_over_pick: { over: 'A', clear: true } });
    expect(r.verdict).toBe('too_short_to_tell');
    const text = recommendationLines(r, { kind: 'trace windows', pick: '1–3', check: '4–6' }, 2000).join('\n');
    expect(text).toMatch(/^held-out check: the traffic is too short to tell: B/m);
  });

  it('a held-out leader within the spread leaves the pick standing', () => {
    const r = recommend([config('A', false, [95, 95, 95, 90, 94, 92]), config('B', false, [90, 90, 90, 93, 93, 93])], ROLES);
    expect(r.check).toMatchObject({ best: 'B', agrees: true, lead_over_pick: { clear: false } });
    expect(r.verdict).toBe('holds');
  });

  it('on equal goodput ranks by TTFT p99, and an exact tie goes to the configuration without the gate', () => {
    const byP99 = recommend(
      [
        config('A', false, [100, 100, 100, 100, 100, 100], [900, 900, 900, 900, 900, 900]),
        config('B', true, [100, 100, 100, 100, 100, 100], [500, 600, 700, 500, 600, 700]),
      ],
      ROLES,
    );
    expect(byP99.pick).toMatchObject({ letter: 'B', lead: { goodput_points: 0, ttft_p99_ratio: 0.667, clear: true } });
    expect(byP99.gate.advice).toBe('on');
    const tie = recommend([config('A', true, [100, 100, 100, 100, 100, 100]), config('B', false, [100, 100, 100, 100, 100, 100])], ROLES);
    expect(tie.pick.letter).toBe('B');
    expect(tie.gate.advice).toBe('off');
  });

  it('counts a request that never got a first token as slower than all', () => {
    const unfinished: SampleOutcome = { requests: 100, good: 98, ttftMs: Array.from({ length: 98 }, () => 100) };
    const r = recommend(
      [
        { letter: 'A', label: 'a', gate: false, outcomes: Array.from({ length: 6 }, () => unfinished) },
        config('B', false, [98, 98, 98, 98, 98, 98], [5000, 5000, 5000, 5000, 5000, 5000]),
      ],
      ROLES,
    );
    expect(r.configurations[0]!.pick.ttft_p99_ms).toBeNull();
    expect(r.pick.letter).toBe('B');
  });
});

describe('held-out samples', () => {
  const req = (atMs: number): TraceRequest => ({ atMs, inputLength: 10, outputLength: 1, hashIds: [1] });

  it('a trace is cut by arrival into six windows of equal trace time, slices of one replay of it, not re-timed', () => {
    const trace = [0, 5, 10, 25, 31, 45, 50, 59, 60].map(req);
    const w = traceWindows(trace)!;
    expect(w.kind).toBe('trace_windows');
    expect(w.samples.map((s) => [s.index, s.role, s.fromMs, s.toMs, s.requests])).toEqual([
      [1, 'pick', 0, 10, 2],
      [2, 'pick', 10, 20, 1],
      [3, 'pick', 20, 30, 1],
      [4, 'check', 30, 40, 1],
      [5, 'check', 40, 50, 1],
      [6, 'check', 50, 60, 3],
    ]);
    expect([...(w.kind === 'trace_windows' ? w.windowOf : [])]).toEqual([0, 0, 1, 2, 3, 4, 5, 5, 5]);
    // One replay of the whole trace, as given; each window reads its own requests' TTFTs from it.
    const replayed: number[][] = [];
    const ttft = [100, 3000, NaN, 200, 300, 400, 500, 2500, NaN];
    const outcomes = heldOutOutcomes(
      w,
      (t) => {
        replayed.push(t.map((r) => r.atMs));
        // The last request was shed: a miss, and counted apart.
        return { ttftMsByRequest: Float64Array.from(ttft), shedByRequest: Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 1) };
      },
      2000,
    );
    expect(replayed).toEqual([[0, 5, 10, 25, 31, 45, 50, 59, 60]]);
    expect(outcomes).toEqual([
      { requests: 2, good: 1, shed: 0, ttftMs: [100, 3000] },
      { requests: 1, good: 0, shed: 0, ttftMs: [] },
      { requests: 1, good: 1, shed: 0, ttftMs: [200] },
      { requests: 1, good: 1, shed: 0, ttftMs: [300] },
      { requests: 1, good: 1, shed: 0, ttftMs: [400] },
      { requests: 3, good: 1, shed: 1, ttftMs: [500, 2500] },
    ]);
  });

  it('a trace whose turns wait on others is not cut; a generated workload is drawn with six seeds, each replayed on its own', () => {
    expect(traceWindows([req(0), { ...req(5), after: 0 }])).toBeUndefined();
    const s = seedSamples(7, (seed) => [req(seed)]);
    expect(s.kind).toBe('seeds');
    expect(s.samples.map((x) => [x.seed, x.role, x.requests])).toEqual([
      [7, 'pick', 1],
      [8, 'pick', 1],
      [9, 'pick', 1],
      [10, 'check', 1],
      [11, 'check', 1],
      [12, 'check', 1],
    ]);
    const replayed: number[] = [];
    const outcomes = heldOutOutcomes(
      s,
      (t) => {
        replayed.push(t[0]!.atMs);
        return { ttftMsByRequest: Float64Array.of(t[0]!.atMs * 200) };
      },
      2000,
    );
    expect(replayed).toEqual([7, 8, 9, 10, 11, 12]);
    expect(outcomes.map((o) => o.good)).toEqual([1, 1, 1, 1, 0, 0]);
  });
});
