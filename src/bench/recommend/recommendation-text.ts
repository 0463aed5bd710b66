import type { Lead, Recommendation, Score } from './recommendation.js';

/** What was picked on and checked on, as the report names it: "trace windows 1–3 (0–300 s, 1000 requests)". */
export interface SampleSets {
  kind: 'trace windows' | 'seeds';
  pick: string;
  check: string;
}

const pct = (v: number): string => `${(100 * v).toFixed(1)}%`;
const ms = (v: number | null): string => (v === null ? 'unfinished' : `${v}`);
const points = (v: number): string => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(1)}`;
const spread = (s: Score): string => (s.goodput_min === s.goodput_max ? '' : ` (${pct(s.goodput_min)}–${pct(s.goodput_max)})`);

function leadWords(l: Lead, name: (letter: string) => string): string {
  const ratio = l.ttft_p99_ratio === null ? '' : `, TTFT p99 ${l.ttft_p99_ratio.toFixed(2)}× ${name(l.over)}'s`;
  return `${points(l.goodput_points)} points of goodput over ${name(l.over)} (per sample ${points(l.goodput_points_min)} to ${points(l.goodput_points_max)})${ratio}`;
}

/** The recommendation as text (docs/bench.md §Recommend): the table, then what it says, plainly. */
export function recommendationLines(r: Recommendation, sets: SampleSets, sloMs: number): string[] {
  const label = new Map(r.configurations.map((c) => [c.letter, c.label]));
  const name = (letter: string): string => `${letter} (${label.get(letter)})`;
  const lines = [
    `recommend: picked on ${sets.kind} ${sets.pick}, checked on ${sets.kind} ${sets.check}, which the pick never saw; ` +
      `ranked by goodput (TTFT ≤ ${sloMs} ms), then TTFT p99`,
    '',
    '| | configuration | gate | picking: goodput (per sample) | TTFT p99 ms | rank | held out: goodput (per sample) | TTFT p99 ms | rank |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const c of r.configurations) {
    lines.push(
      `| ${c.letter} | ${c.label} | ${c.gate ? 'on' : 'off'} | ${pct(c.pick.goodput)}${spread(c.pick)} | ${ms(c.pick.ttft_p99_ms)} | ${c.pick.rank} | ` +
        `${pct(c.check.goodput)}${spread(c.check)} | ${ms(c.check.ttft_p99_ms)} | ${c.check.rank} |`,
    );
  }
  // Shed requests are misses in the goodput above; what the admitted saw is said beside it.
  for (const c of r.configurations.filter((x) => x.pick.shed + x.check.shed > 0))
    lines.push(
      `${c.letter}: --admission slo shed ${c.pick.shed} picking and ${c.check.shed} held-out requests; goodput of the admitted ` +
        `${c.pick.goodput_admitted === null ? '–' : pct(c.pick.goodput_admitted)} picking, ${c.check.goodput_admitted === null ? '–' : pct(c.check.goodput_admitted)} held out`,
    );
  lines.push('');
  const best = r.configurations.find((c) => c.letter === r.pick.letter)!;
  lines.push(
    `best: ${name(r.pick.letter)}, goodput ${pct(best.pick.goodput)}: ${leadWords(r.pick.lead, name)}` +
      (r.pick.lead.clear ? '' : `; within the spread, so the picking samples cannot tell it from ${name(r.pick.lead.over)}`),
  );
  if (r.gate.advice === null) {
    lines.push('gate: every configuration compared has --worker-queue-limit; add one without it (--sweep worker-queue-limit=off,…) to ask');
  } else if (r.gate.advice === 'off') {
    lines.push(
      r.gate.lead_over_gate_off === null
        ? 'gate: keep --worker-queue-limit off: the best configuration has no gate'
        : `gate: keep --worker-queue-limit off: the best gate's lead over ${name(r.gate.gate_off_best!)} is within the spread ` +
            `of the picking samples (${leadWords(r.gate.lead_over_gate_off, name)})`,
    );
  } else {
    lines.push(
      `gate: set it as ${name(r.pick.letter)} does: its worst picking sample beats the best of ${name(r.gate.gate_off_best!)} ` +
        `(${leadWords(r.gate.lead_over_gate_off!, name)})`,
    );
  }
  const l = r.check.lead_over_pick;
  if (l === null) lines.push(`held-out check: ${name(r.pick.letter)} ranks first on ${sets.kind} ${sets.check} too: the pick holds`);
  else if (r.check.agrees)
    lines.push(
      `held-out check: ${name(r.check.best)} ranks first on ${sets.kind} ${sets.check}, the pick ${r.check.pick_rank}, ` +
        `but within the spread (${leadWords(l, name)}): the pick holds`,
    );
  else
    lines.push(
      `held-out check: the traffic is too short to tell: ${name(r.check.best)} leads the pick beyond the held-out spread ` +
        `(${leadWords(l, name)}); replay more of it, or a longer trace`,
    );
  return lines;
}
