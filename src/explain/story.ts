import type { AdminDecision, AdminDecisionCandidate } from '../contract/index.js';
import { shortUrl } from '../fleet/index.js';

/** The router facts a record is read against (from the /admin/decisions document). */
export interface ReadingContext {
  workerQueueLimit: number | null;
  blockSize: number;
  /** The document's --queue-gate; absent from routers before the modes, which were all fixed. */
  gateMode?: 'fixed' | 'auto' | 'tokens' | 'slo';
  /** --ttft-slo-ms, from the same document; absent or null when unset. */
  ttftSloMs?: number | null;
}

const at = (ms: number): string => new Date(ms).toISOString();
const host = (url: string): string => shortUrl(url);
const blocks = (n: number, of: number): string => `${n}/${of} block${of === 1 ? '' : 's'}`;

/**
 * One decision as a short story, line by line (docs/decisions.md §routerctl explain):
 * what owned the prefix and what the gate made of each owner, what was chosen and
 * why, what was given up, and what the engine then reported. Plain text, no colour:
 * a script can read it and a test can hold it verbatim.
 */
export function decisionStory(d: AdminDecision, ctx: ReadingContext): string[] {
  const lines: string[] = [];
  const label = d.decision ?? d.reason;
  lines.push(`request ${d.request_id} at ${at(d.at_ms)}: ${label} (policy ${d.policy}, reason ${d.reason})`);
  const key = d.query_blocks > 0 ? `${d.query_blocks} prefix blocks of about ${ctx.blockSize} tokens` : 'no prefix key';
  lines.push(`prompt:   ${d.input_tokens} tokens, ${key}`);
  if (d.query_blocks > 0) {
    if (d.candidates.length === 0) lines.push('owners:   none: no worker held any of this prefix');
    d.candidates.forEach((c, i) => lines.push(`${i === 0 ? 'owners:   ' : '          '}${ownerLine(c, d, ctx)}`));
    if (d.more_candidates > 0) lines.push(`          and ${d.more_candidates} more holding fewer blocks`);
  }
  lines.push(
    `chose:    ${host(d.worker)}${d.query_blocks > 0 ? `, holding ${blocks(d.matched_blocks, d.query_blocks)}` : ''}: ${why(d, ctx)}`,
  );
  const lost = givenUp(d);
  if (lost !== null) lines.push(`gave up:  ${lost}`);
  if (d.retried_to !== null) lines.push(`retried:  ${host(d.worker)} failed before answering; the request went to ${host(d.retried_to)}`);
  lines.push(`engine:   ${engineLine(d)}`);
  return lines;
}

/** A time in ms as an operator reads it against a goal: `850 ms`, `3.1 s`. */
const seconds = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

function ownerLine(c: AdminDecisionCandidate, d: AdminDecision, ctx: ReadingContext): string {
  const held = `${host(c.worker)} held ${blocks(c.matched_blocks, d.query_blocks)}`;
  if (slo(ctx)) {
    // The slo gate's verdict is a prediction against the goal, not a waiting count.
    const p = c.predicted_ttft_ms;
    const predicted = p === undefined || p === null ? 'rate not yet learnt' : `predicted ${seconds(p)}`;
    if (c.gate === 'gated') return `${held}: gated (${predicted} > goal ${seconds(ctx.ttftSloMs!)})`;
    return `${held}: admitted (${predicted})`;
  }
  if (c.gate === 'unknown') return `${held}, no fresh load sample: admitted blindly`;
  if (c.gate === 'gated') return `${held}, waiting ${c.waiting}: gated (${gatedBecause(c, d, ctx)})`;
  return `${held}, waiting ${c.waiting}: admitted`;
}

/** Why the gate turned an owner away: the fixed limit as the reference says it, or the rule an experimental mode had in force. */
function gatedBecause(c: AdminDecisionCandidate, d: AdminDecision, ctx: ReadingContext): string {
  return fixed(ctx) ? `${c.waiting} ≥ limit ${ctx.workerQueueLimit}` : `${ctx.gateMode} gate: ${d.gate_rule}`;
}

function limitOf(d: AdminDecision, ctx: ReadingContext): string {
  return fixed(ctx) ? `limit ${ctx.workerQueueLimit}` : `rule in force (${ctx.gateMode}: ${d.gate_rule})`;
}

const fixed = (ctx: ReadingContext): boolean => ctx.gateMode === undefined || ctx.gateMode === 'fixed';
const slo = (ctx: ReadingContext): boolean => ctx.gateMode === 'slo' && ctx.ttftSloMs !== undefined && ctx.ttftSloMs !== null;

/** The selected worker's prediction, as `why` cites it under slo. */
const chosenPrediction = (d: AdminDecision): string =>
  d.predicted_ttft_ms === undefined || d.predicted_ttft_ms === null ? '' : `, predicted ${seconds(d.predicted_ttft_ms)}`;

/** Why this worker, in the policy's terms. */
function why(d: AdminDecision, ctx: ReadingContext): string {
  switch (d.decision) {
    case 'cache_hit':
      if (d.partial_diversion && slo(ctx))
        return `the deepest owner was predicted to miss the ${seconds(ctx.ttftSloMs!)} goal, so a shallower owner kept part of the prefix${chosenPrediction(d)} (cache_hit, partial diversion)`;
      return d.partial_diversion
        ? 'the deepest owner was gated, so a shallower owner kept part of the prefix (cache_hit, partial diversion)'
        : 'it held the prefix and the gate admitted it (cache_hit)';
    case 'cache_worker_queued':
      if (slo(ctx))
        return `every owner was predicted to miss the ${seconds(ctx.ttftSloMs!)} goal and this worker was not${chosenPrediction(d)} (cache_worker_queued)`;
      return `every owner of the prefix was at or over the queue ${limitOf(d, ctx)}, so the request went to the least loaded worker below it (cache_worker_queued)`;
    case 'all_queued':
      if (slo(ctx))
        return `every owner was predicted to miss the ${seconds(ctx.ttftSloMs!)} goal, and so was the worker it would have gone to instead: affinity was kept (all_queued)`;
      return `every worker was at or over the queue ${limitOf(d, ctx)}: nowhere better to go, so affinity was kept (all_queued)`;
    case 'cache_miss':
      if (d.best_matched_blocks === 0) return 'no worker held this prefix, so it went to the least loaded (cache_miss)';
      return `the owners held too little of the prefix to count as a hit (best ${d.best_matched_blocks}/${d.query_blocks} blocks), so it went by load (cache_miss)`;
    default:
      return `policy ${d.policy}: ${d.reason}`;
  }
}

/** The prefix blocks the routing gave up, or null when it gave up none. */
function givenUp(d: AdminDecision): string | null {
  if (d.query_blocks === 0 || d.best_worker === null) return null;
  const gap = d.best_matched_blocks - d.matched_blocks;
  if (gap <= 0) return null;
  const best = `${host(d.best_worker)} held ${d.best_matched_blocks}`;
  if (d.decision === 'cache_worker_queued') return `${d.diverted_blocks || gap} blocks: ${best}, gated; the diversion cost them`;
  if (d.partial_diversion) return `${gap} blocks: ${best}, gated`;
  return `${gap} blocks: ${best}, not chosen`;
}

function engineLine(d: AdminDecision): string {
  if (d.status === null) return 'no response recorded (still running, cut, or the client left)';
  const parts = [`status ${d.status}`];
  parts.push(d.cached_tokens === null ? 'no cached-token count reported' : `reported ${d.cached_tokens} cached tokens`);
  if (d.ttft_ms !== null)
    parts.push(
      // predicted_ttft_ms is absent from an older router's records, null while the worker's rate is still being learnt.
      `first byte after ${d.ttft_ms} ms${d.predicted_ttft_ms === undefined || d.predicted_ttft_ms === null ? '' : ` (predicted ${d.predicted_ttft_ms} ms)`}`,
    );
  if (d.duration_ms !== null) parts.push(`done after ${d.duration_ms} ms`);
  return parts.join(', ');
}

/** One decision on one line, for `explain` tailing a router. */
export function decisionLine(d: AdminDecision): string {
  const label = (d.decision ?? d.reason).padEnd(19);
  const matched = d.query_blocks > 0 ? ` ${d.matched_blocks}/${d.query_blocks}` : '';
  const best =
    d.best_worker !== null && d.best_worker !== d.worker && d.best_matched_blocks > d.matched_blocks
      ? ` (best ${host(d.best_worker)} ${d.best_matched_blocks})`
      : '';
  const cached = d.cached_tokens === null ? '' : ` cached ${d.cached_tokens}`;
  const ttft = d.ttft_ms === null ? '' : ` ttft ${d.ttft_ms}ms`;
  return `${at(d.at_ms).slice(11, 23)} ${d.request_id}  ${label} → ${host(d.worker)}${matched}${best}${cached}${ttft}`;
}
