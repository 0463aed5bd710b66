import type { AdminDecision } from '../contract/index.js';
import { shortUrl } from '../fleet/index.js';

/** Where prompt tokens that were not reused went (docs/decisions.md §routerctl doctor). */
export type Loss = 'not_held' | 'gate_diversions' | 'routing_misses' | 'capacity' | 'stale_index';

export interface LadderStep {
  readonly step: Loss;
  readonly tokens: number;
  /** Of the prompt tokens. */
  readonly share: number;
}

export interface Finding {
  readonly cause: Loss;
  readonly share: number;
  readonly text: string;
}

export interface Diagnosis {
  /** Records analysed: completed, with a prefix key and the engine's cached-token count. */
  readonly requests: number;
  /** Records left out (no prefix key, still running, failed, or no engine report). */
  readonly skipped: number;
  readonly promptTokens: number;
  readonly ladder: readonly LadderStep[];
  /** Reused beyond what the router's index credited the selected worker with. */
  readonly unexpectedReuse: number;
  readonly reportedCached: number;
  readonly diversions: number;
  /** The largest loss, when any loss is above 1 % of the prompt tokens. */
  readonly dominant: Loss | null;
  readonly findings: readonly Finding[];
}

/** A loss this large (of the prompt tokens) gets a finding. */
const FINDING_AT = 0.05;
/**
 * A worker whose credited requests reused nothing this often, while every other worker
 * that served several reused what it was credited with, lost its cache (a restart, a
 * flush); the same pattern on every worker is capacity.
 */
const STALE_ZERO_RATE = 0.6;
const HEALTHY_ZERO_RATE = 0.2;
const HEALTHY_MIN_REQUESTS = 3;

/**
 * Decompose the prompt tokens of a set of decision records into what the engines
 * reused and where the rest went (docs/decisions.md §routerctl doctor). Per record, in
 * tokens (blocks × the prompt's tokens per prefix block):
 *
 *   prompt = not held by any worker + held by the best owner
 *   best   = gate diversions (the gate turned the deepest owner away) or routing misses
 *            (a deeper owner was admitted but not chosen) + what the chosen worker held
 *   chosen = what the engine reported reusing + (index over engine) − (engine over index)
 *
 * An index over the engine is an eviction when the engine still reused part of the
 * prefix, and a stale index when it reused none of it; stale losses spread over the
 * workers are evictions too (engines that are too small), concentrated on one worker
 * they point at that engine having lost its cache (a restart, a flush).
 */
export function diagnose(records: readonly AdminDecision[]): Diagnosis {
  let requests = 0;
  let prompt = 0;
  let notHeld = 0;
  let gate = 0;
  let misses = 0;
  let evicted = 0;
  let unexpected = 0;
  let reported = 0;
  let diversions = 0;
  /** Per worker: tokens credited but not reused at all, requests credited, and how many of those reused nothing. */
  const byWorker = new Map<string, { zeroTokens: number; credited: number; zero: number }>();
  const of = (w: string) => {
    let e = byWorker.get(w);
    if (!e) byWorker.set(w, (e = { zeroTokens: 0, credited: 0, zero: 0 }));
    return e;
  };
  for (const d of records) {
    if (d.query_blocks === 0 || d.cached_tokens === null || d.status !== 200 || d.input_tokens <= 0) continue;
    requests++;
    const perBlock = d.input_tokens / d.query_blocks;
    const best = Math.min(d.input_tokens, d.best_matched_blocks * perBlock);
    const chosen = Math.min(best, d.matched_blocks * perBlock);
    const gated = d.decision === 'cache_worker_queued' || d.partial_diversion;
    if (d.decision === 'cache_worker_queued') diversions++;
    prompt += d.input_tokens;
    notHeld += d.input_tokens - best;
    // Turned away by capacity admission (a full KV cache): the engine's size, not the routing.
    if (gated) gate += best - chosen;
    else if (d.admission_rejected > 0) evicted += best - chosen;
    else misses += best - chosen;
    const rep = Math.min(d.input_tokens, d.cached_tokens);
    reported += rep;
    const w = of(d.retried_to ?? d.worker);
    if (chosen > 0) w.credited++;
    if (chosen > rep) {
      if (rep > 0) evicted += chosen - rep;
      else {
        w.zero++;
        w.zeroTokens += chosen;
      }
    } else unexpected += rep - chosen;
  }
  // The worker that reused nothing most, against the others that served several.
  const ranked = [...byWorker.entries()].sort((a, b) => b[1].zeroTokens - a[1].zeroTokens);
  const [topWorker, top] = ranked[0] ?? [null, undefined];
  const others = ranked.slice(1).filter(([, e]) => e.credited >= HEALTHY_MIN_REQUESTS);
  const lostItsCache =
    top !== undefined &&
    top.credited > 0 &&
    top.zero / top.credited >= STALE_ZERO_RATE &&
    others.length > 0 &&
    others.every(([, e]) => e.zero / e.credited <= HEALTHY_ZERO_RATE);
  const stale = lostItsCache ? top!.zeroTokens : 0;
  for (const [name, e] of byWorker) if (!(lostItsCache && name === topWorker)) evicted += e.zeroTokens;

  const share = (t: number): number => (prompt > 0 ? t / prompt : 0);
  const ladder: LadderStep[] = (
    [
      ['not_held', notHeld],
      ['gate_diversions', gate],
      ['routing_misses', misses],
      ['capacity', evicted],
      ['stale_index', stale],
    ] as Array<[Loss, number]>
  ).map(([step, tokens]) => ({ step, tokens: Math.round(tokens), share: share(tokens) }));
  const losses = [...ladder].sort((a, b) => b.tokens - a.tokens);
  const dominant = losses[0] && losses[0].share >= 0.01 ? losses[0].step : null;
  const findings = losses
    .filter((l) => l.share >= FINDING_AT)
    .map((l) => ({ cause: l.step, share: l.share, text: findingText(l, diversions, topWorker) }));
  return {
    requests,
    skipped: records.length - requests,
    promptTokens: Math.round(prompt),
    ladder,
    unexpectedReuse: Math.round(unexpected),
    reportedCached: Math.round(reported),
    diversions,
    dominant,
    findings,
  };
}

const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;

function findingText(l: LadderStep, diversions: number, staleWorker: string | null): string {
  switch (l.step) {
    case 'not_held':
      return `${pct(l.share)} of prompt tokens were held by no worker when routed: prompts not seen before, or evicted before they came back. Routing cannot win these; engines with more KV cache (or fewer distinct prompts) can`;
    case 'gate_diversions':
      return `gate diversions cost ${pct(l.share)} of prompt tokens (${diversions} request${diversions === 1 ? '' : 's'} sent away from their prefix owner): raise --worker-queue-limit or add --saturation-queue-floor`;
    case 'routing_misses':
      return `routing misses cost ${pct(l.share)}: a worker holding more of the prefix was admitted but not chosen. Lower --cache-affinity-min-matched-tokens, or raise --pressure-rel-threshold if the pressure guard overrides affinity`;
    case 'capacity':
      return `capacity cost ${pct(l.share)}: engines across the fleet evicted what the router's index still credited them with, or had no room for a request where its prefix was. Give the engines more KV cache; --prefix-source events makes the index see evictions`;
    case 'stale_index':
      return `the index was stale for ${staleWorker ? shortUrl(staleWorker) : 'one worker'}: it reused nothing the index credited it with (${pct(l.share)}), as after an engine restart or cache flush. --prefix-source events forgets what a restarted engine held`;
  }
}

const LABELS: Record<Loss, string> = {
  not_held: 'held by no worker',
  gate_diversions: 'gate diversions',
  routing_misses: 'routing misses',
  capacity: 'capacity (evictions, full KV)',
  stale_index: 'stale index',
};

/** The ladder and the findings as text. */
export function formatDiagnosis(d: Diagnosis): string[] {
  const n = (x: number): string => x.toLocaleString('en').padStart(12);
  const row = (sign: string, label: string, tokens: number): string =>
    `  ${sign} ${label.padEnd(31)}${n(tokens)}  ${pct(d.promptTokens > 0 ? tokens / d.promptTokens : 0).padStart(8)}`;
  const lines = [
    `doctor: ${d.requests} request${d.requests === 1 ? '' : 's'} analysed${d.skipped > 0 ? ` (${d.skipped} left out: no prefix key, unfinished, failed, or no cached-token report)` : ''}`,
  ];
  if (d.requests === 0) {
    lines.push('nothing to analyse: no completed request with a prefix key and an engine cached-token report');
    return lines;
  }
  lines.push(row(' ', 'prompt tokens', d.promptTokens));
  for (const s of d.ladder) lines.push(row('−', LABELS[s.step], s.tokens));
  lines.push(row('+', 'reused beyond the index', d.unexpectedReuse));
  lines.push(row('=', 'cached tokens reported', d.reportedCached));
  if (d.findings.length === 0) lines.push(`findings: no loss above ${pct(FINDING_AT)} of prompt tokens`);
  else {
    lines.push('findings:');
    for (const f of d.findings) lines.push(`  ${f.text}`);
  }
  return lines;
}
