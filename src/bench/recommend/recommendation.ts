/** One configuration's outcome on one sample: what the ranking reads. */
export interface SampleOutcome {
  requests: number;
  /** Requests whose first token came within the TTFT objective. */
  good: number;
  /** Requests --admission slo shed (misses in `good`). */
  shed: number;
  /** TTFT of each finished request, ms. */
  ttftMs: readonly number[];
}

export interface RankedConfiguration {
  letter: string;
  label: string;
  /** Whether the queue gate is on: a --worker-queue-limit under cache_aware. */
  gate: boolean;
  /** One outcome per sample, in sample order. */
  outcomes: readonly SampleOutcome[];
}

/** A configuration's figures over a set of samples (docs/bench.md §Recommend). */
export interface Score {
  requests: number;
  goodput: number;
  /** Requests --admission slo shed, and the goodput of the rest: what the admitted saw. */
  shed: number;
  goodput_admitted: number | null;
  /** Over every request of the samples, one that never got a first token counting as slower than all: null when p99 falls on one. */
  ttft_p99_ms: number | null;
  /** Per sample, in sample order. */
  samples: Array<{ goodput: number; ttft_p99_ms: number | null }>;
  goodput_min: number;
  goodput_max: number;
  /** Least and greatest per-sample TTFT p99; null for an unbounded one. */
  ttft_p99_ms_min: number | null;
  ttft_p99_ms_max: number | null;
  /** 1 for the best. */
  rank: number;
}

/** How far the leader is ahead of another configuration over a set of samples. */
export interface Lead {
  over: string;
  /** Goodput points (percent) ahead, over the samples pooled, and its least and greatest per sample. */
  goodput_points: number;
  goodput_points_min: number;
  goodput_points_max: number;
  /** The leader's TTFT p99 over the other's; null when either is unbounded. */
  ttft_p99_ratio: number | null;
  /**
   * Whether the lead is beyond the spread: the leader's worst sample beats the other's
   * best on goodput (or, where both had the same goodput in every sample, on TTFT p99).
   * Otherwise their ranges over the samples overlap, and the lead is within the spread.
   */
  clear: boolean;
}

export interface Recommendation {
  configurations: Array<{ letter: string; label: string; gate: boolean; pick: Score; check: Score }>;
  pick: { letter: string; label: string; lead: Lead };
  /**
   * off: the best is a configuration without the gate, or the best without it is within
   * the picking samples' spread of it; on: the gate's lead is clear of the spread; null:
   * no configuration without the gate was compared.
   */
  gate: { advice: 'off' | 'on' | null; gate_off_best: string | null; lead_over_gate_off: Lead | null };
  /**
   * The held-out samples' verdict: the pick holds when it ranks first there too, or the
   * configuration that does leads it only within the held-out samples' spread;
   * otherwise the held-out ranking disagrees, and the traffic is too short to tell.
   */
  check: { best: string; pick_rank: number; lead_over_pick: Lead | null; agrees: boolean };
  verdict: 'holds' | 'too_short_to_tell';
}

const round = (v: number, places: number): number => Math.round(v * 10 ** places) / 10 ** places;

/** p99 over `requests` requests of which these finished; an unfinished one is slower than every finished one. */
function p99Of(ttftMs: readonly number[], requests: number): number | null {
  if (requests === 0) return null;
  const rank = Math.ceil(0.99 * requests);
  if (rank > ttftMs.length) return null;
  const sorted = Float64Array.from(ttftMs).sort();
  return round(sorted[rank - 1]!, 1);
}

interface Pooled {
  requests: number;
  good: number;
  shed: number;
  p99: number | null;
}

function pool(outcomes: readonly SampleOutcome[]): Pooled {
  let requests = 0;
  let good = 0;
  let shed = 0;
  const ttft: number[] = [];
  for (const o of outcomes) {
    requests += o.requests;
    good += o.good;
    shed += o.shed;
    for (const t of o.ttftMs) ttft.push(t);
  }
  return { requests, good, shed, p99: p99Of(ttft, requests) };
}

const goodput = (p: Pooled): number => (p.requests > 0 ? p.good / p.requests : 0);

/** Negative when a ranks before b: more goodput, then a lower p99 (unbounded last). */
function compareFigures(a: Pooled, b: Pooled): number {
  const g = goodput(b) - goodput(a);
  if (g !== 0) return g;
  return (a.p99 ?? Infinity) - (b.p99 ?? Infinity) || 0;
}

/** Configurations ranked on these samples; exact ties keep the gate off, then the order given. */
function rank(configs: readonly RankedConfiguration[], samples: readonly number[]): RankedConfiguration[] {
  const pooled = new Map(configs.map((c) => [c, pool(samples.map((s) => c.outcomes[s]!))]));
  return [...configs].sort((a, b) => compareFigures(pooled.get(a)!, pooled.get(b)!) || Number(a.gate) - Number(b.gate));
}

/** Per sample: exact goodput and p99 (unbounded as Infinity), what spreads are read from. */
function perSample(c: RankedConfiguration, samples: readonly number[]): Array<{ goodput: number; p99: number }> {
  return samples.map((s) => {
    const one = pool([c.outcomes[s]!]);
    return { goodput: goodput(one), p99: one.p99 ?? Infinity };
  });
}

const finite = (v: number): number | null => (Number.isFinite(v) ? v : null);

function score(c: RankedConfiguration, samples: readonly number[], position: number): Score {
  const p = pool(samples.map((s) => c.outcomes[s]!));
  const per = perSample(c, samples);
  return {
    requests: p.requests,
    goodput: round(goodput(p), 4),
    shed: p.shed,
    goodput_admitted: p.requests > p.shed ? round(p.good / (p.requests - p.shed), 4) : null,
    ttft_p99_ms: p.p99,
    samples: per.map((x) => ({ goodput: round(x.goodput, 4), ttft_p99_ms: finite(x.p99) })),
    goodput_min: round(Math.min(...per.map((x) => x.goodput)), 4),
    goodput_max: round(Math.max(...per.map((x) => x.goodput)), 4),
    ttft_p99_ms_min: finite(Math.min(...per.map((x) => x.p99))),
    ttft_p99_ms_max: finite(Math.max(...per.map((x) => x.p99))),
    rank: position,
  };
}

/** The leader's worst sample beats the other's best: on goodput, or on p99 where every sample of both had one goodput. */
function clearOf(leader: ReadonlyArray<{ goodput: number; p99: number }>, other: ReadonlyArray<{ goodput: number; p99: number }>): boolean {
  const g = (xs: ReadonlyArray<{ goodput: number }>) => xs.map((x) => x.goodput);
  const p = (xs: ReadonlyArray<{ p99: number }>) => xs.map((x) => x.p99);
  if (Math.min(...g(leader)) > Math.max(...g(other))) return true;
  const all = [...g(leader), ...g(other)];
  if (Math.min(...all) !== Math.max(...all)) return false;
  return Math.max(...p(leader)) < Math.min(...p(other));
}

function lead(leader: RankedConfiguration, other: RankedConfiguration, samples: readonly number[]): Lead {
  const a = pool(samples.map((s) => leader.outcomes[s]!));
  const b = pool(samples.map((s) => other.outcomes[s]!));
  const x = perSample(leader, samples);
  const y = perSample(other, samples);
  const points = x.map((one, i) => 100 * (one.goodput - y[i]!.goodput));
  return {
    over: other.letter,
    goodput_points: round(100 * (goodput(a) - goodput(b)), 2),
    goodput_points_min: round(Math.min(...points), 2),
    goodput_points_max: round(Math.max(...points), 2),
    ttft_p99_ratio: a.p99 !== null && b.p99 !== null && b.p99 > 0 ? round(a.p99 / b.p99, 3) : null,
    clear: clearOf(x, y),
  };
}

/**
 * Pick on the picking samples and check the pick on the held-out ones, which it never
 * saw (docs/bench.md §Recommend): rank by goodput under the TTFT objective, then by
 * TTFT p99, over each set's samples pooled. A lead counts only beyond the spread, the
 * min–max over the set's samples (clearOf): the gate is advised only when its lead is,
 * and the held-out samples contradict the pick only when theirs is.
 */
export function recommend(configs: readonly RankedConfiguration[], roles: ReadonlyArray<'pick' | 'check'>): Recommendation {
  if (configs.length < 2) throw new Error('a recommendation compares at least two configurations');
  const picking = roles.flatMap((r, i) => (r === 'pick' ? [i] : []));
  const checking = roles.flatMap((r, i) => (r === 'check' ? [i] : []));
  const byPick = rank(configs, picking);
  const byCheck = rank(configs, checking);
  const best = byPick[0]!;
  const gateOffBest = byPick.find((c) => !c.gate);
  const leadOverGateOff = best.gate && gateOffBest ? lead(best, gateOffBest, picking) : null;
  const gateAdvice = gateOffBest === undefined ? null : !best.gate || !leadOverGateOff!.clear ? 'off' : 'on';
  const heldOutBest = byCheck[0]!;
  const leadOverPick = heldOutBest === best ? null : lead(heldOutBest, best, checking);
  const agrees = leadOverPick === null || !leadOverPick.clear;
  return {
    configurations: configs.map((c) => ({
      letter: c.letter,
      label: c.label,
      gate: c.gate,
      pick: score(c, picking, byPick.indexOf(c) + 1),
      check: score(c, checking, byCheck.indexOf(c) + 1),
    })),
    pick: { letter: best.letter, label: best.label, lead: lead(best, byPick[1]!, picking) },
    gate: { advice: gateAdvice, gate_off_best: gateOffBest?.letter ?? null, lead_over_gate_off: leadOverGateOff },
    check: { best: heldOutBest.letter, pick_rank: byCheck.indexOf(best) + 1, lead_over_pick: leadOverPick, agrees },
    verdict: agrees ? 'holds' : 'too_short_to_tell',
  };
}
