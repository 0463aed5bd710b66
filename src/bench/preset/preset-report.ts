import type { PresetArmResult, PresetResult } from './preset-run.js';

const fmt = (v: number | null | undefined, digits: number): string => (v === null || v === undefined ? '-' : v.toFixed(digits));
const seconds = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : v < 10 ? v.toFixed(3) : v.toFixed(1));

/** The ordering llm-d's table shows, read on this run: events index < requests index < load-aware, load-aware and random within 20 %. */
export interface PresetVerdict {
  ordered: boolean;
  loadAwareVsRandom: number | null;
  /** Worst TTFT p90 of the peer's arms over the best, here and as published. */
  bestToWorst: number | null;
  publishedBestToWorst: number | null;
}

export function presetVerdict(r: PresetResult): PresetVerdict {
  const p90 = (peer: string): number | null => r.arms.find((a) => a.peer === peer)?.ttft_p90_s ?? null;
  const precise = p90('precise (KV events)');
  const approximate = p90('approximate (router-side)');
  const load = p90('load-aware');
  const random = p90('random');
  if (precise === null || approximate === null || load === null || random === null)
    return { ordered: false, loadAwareVsRandom: null, bestToWorst: null, publishedBestToWorst: null };
  const peers = r.arms.filter((a) => a.published !== null);
  const ours = peers.map((a) => a.ttft_p90_s!);
  const theirs = peers.map((a) => a.published!.ttftP90S);
  const ratio = load / random;
  return {
    ordered: precise < approximate && approximate < load && Math.abs(ratio - 1) <= 0.2,
    loadAwareVsRandom: ratio,
    bestToWorst: Math.max(...ours) / Math.min(...ours),
    publishedBestToWorst: Math.max(...theirs) / Math.min(...theirs),
  };
}

/** The preset's table: each arm's figures in the peer's columns, the published ones beside them (docs/bench.md §Presets). */
export function renderPresetReport(r: PresetResult): string[] {
  const head = [
    'arm',
    'configuration',
    'output tok/s',
    'TTFT p90 s',
    'TTFT mean s',
    'wait queue',
    'cached',
    "llm-d's arm",
    'tok/s',
    'p90 s',
    'mean s',
    'queue',
  ];
  const row = (a: PresetArmResult): string[] => [
    a.letter,
    a.label,
    fmt(a.output_tokens_per_s, 0),
    seconds(a.ttft_p90_s),
    seconds(a.ttft_mean_s),
    fmt(a.waiting_mean, 1),
    a.cached_token_ratio === null ? '-' : `${(a.cached_token_ratio * 100).toFixed(1)} %`,
    a.peer ?? '(none)',
    fmt(a.published?.outputTokensPerS, 0),
    seconds(a.published?.ttftP90S),
    seconds(a.published?.ttftMeanS),
    fmt(a.published?.waitingMean, 1),
  ];
  const rows = [head, ...r.arms.map(row)];
  const widths = head.map((_, i) => Math.max(...rows.map((cells) => cells[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i < 2 || i === 7 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const v = presetVerdict(r);
  return [
    `preset ${r.preset}: ${r.requests} requests on ${r.workers} engines, virtual clock, seed ${r.seed}, KV events ${r.kv_event_delay_ms} ms after the step`,
    `source: ${r.source}`,
    '',
    line(rows[0]!),
    ...rows.slice(1).map(line),
    '',
    `order on TTFT p90 as llm-d's (events < requests < load-aware, load-aware within 20 % of random): ${v.ordered ? 'yes' : 'no'}` +
      (v.loadAwareVsRandom === null ? '' : `; load-aware / random ${v.loadAwareVsRandom.toFixed(2)}`),
    `worst / best TTFT p90: ${fmt(v.bestToWorst, 1)}x here, ${fmt(v.publishedBestToWorst, 0)}x published`,
  ];
}
