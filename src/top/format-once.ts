import { paint } from '../cli/index.js';
import {
  DASH,
  bucketCounts,
  fmtAge,
  fmtCount,
  fmtDuration,
  fmtInt,
  fmtPct,
  fmtQuantileSeconds,
  fmtTokens,
  lastAnswerAgeMs,
  nonEmptySpan,
  ownCounterText,
  replicaState,
  pad,
  shortUrl,
  waitingLevel,
  sourceName,
} from '../fleet/index.js';
import { filterWorkers, sortWorkers } from '../fleet/index.js';
import type { FleetView, FleetWorker, SortKey } from '../fleet/index.js';

export interface OnceOptions {
  color: boolean;
  sort: SortKey;
  /** The sort turned around (--reverse). */
  reverse?: boolean;
  filter: string;
  /** Tokens per prefix block when the router does not say (for the ≈tokens column). */
  blockSize: number;
  /** The clock the replicas' last answers are aged against; now by default. */
  now?: number;
}

/**
 * The `--once` report: one plain-text table (kubectl-top style) that reads well in a
 * pipe, a log or a ticket. Colour only when asked for; no cursor movement ever.
 */
export function formatOnce(view: FleetView, o: OnceOptions): string {
  const lines: string[] = [];
  const r = view.router;
  const c = (s: string, style: Parameters<typeof paint>[1]): string => paint(s, style, o.color);

  for (const line of headerLines(view)) lines.push(line);
  if (view.alerts.allQueued) lines.push(c('ALERT fleet saturated: every worker is at or over the queue limit (all_queued)', 'red'));
  else if (view.alerts.allQueuedInferred) lines.push(c('ALERT all_queued decisions are being booked: the fleet is saturated', 'red'));
  if (view.alerts.gateInert)
    lines.push(c('ALERT queue gate inert: no worker has a fresh load sample, so --worker-queue-limit does nothing', 'yellow'));
  lines.push('');
  for (const line of replicaLines(view, o.now ?? Date.now(), c)) lines.push(line);
  lines.push('');

  const multi = view.replicas.length > 1 && view.source !== 'engine';
  const cols = ['WORKER', 'WAITING', 'RUNNING', 'INFLIGHT', ...(multi ? ['BY-REPLICA'] : []), 'SAMPLE', 'GATED', 'GATE-REJ', 'BREAKER'];
  const rows: string[][] = [];
  const styles: Array<'red' | 'yellow' | undefined> = [];
  const workers = sortWorkers(filterWorkers(view.workers, o.filter), o.sort, o.reverse === true);
  for (const w of workers) {
    const level = waitingLevel(w.waiting, r.workerQueueLimit);
    rows.push([
      shortUrl(w.url),
      w.waiting === null ? DASH : r.workerQueueLimit !== null ? `${w.waiting}/${r.workerQueueLimit}` : String(w.waiting),
      fmtInt(w.running),
      fmtInt(w.inflight),
      ...(multi ? [w.inflightByReplica.map((v) => fmtInt(v)).join('|')] : []),
      sampleText(w),
      w.gated === null ? DASH : w.gated ? 'GATED' : 'no',
      fmtInt(w.gateRejectionsTotal),
      w.breaker ?? DASH,
    ]);
    styles.push(w.gated || level === 'over' ? 'red' : level === 'warn' ? 'yellow' : undefined);
  }
  const widths = cols.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const right = new Set(cols.map((h, i) => (['WAITING', 'RUNNING', 'INFLIGHT', 'GATE-REJ'].includes(h) ? i : -1)));
  const render = (row: string[]): string =>
    row
      .map((cell, i) => pad(cell, widths[i]!, right.has(i) ? 'right' : 'left'))
      .join('  ')
      .trimEnd();
  lines.push(render(cols));
  rows.forEach((row, i) => {
    const style = styles[i];
    lines.push(style ? c(render(row), style) : render(row));
  });
  if (workers.length === 0) lines.push(o.filter ? `(no worker matches "${o.filter}")` : '(no workers)');
  const hidden = view.workers.length - workers.length;
  if (hidden > 0) lines.push(`(${hidden} more hidden by the filter "${o.filter}")`);
  lines.push('');

  const d = view.decisions;
  if (d) {
    lines.push(
      `decisions   cache_hit ${d.cache_hit} · cache_miss ${d.cache_miss} · cache_worker_queued ${d.cache_worker_queued} · all_queued ${d.all_queued}`,
    );
    lines.push(`hit ratio   ${fmtPct(view.hitRatio)} (cache_hit / (cache_hit + cache_miss + cache_worker_queued); all_queued left out)`);
  } else {
    lines.push('decisions   – (this router books no cache-aware decisions)');
  }
  const extra = [
    `selection failures ${fmtInt(view.selectionFailuresTotal)}`,
    view.partialDiversionsTotal !== null ? `partial diversions ${fmtInt(view.partialDiversionsTotal)}` : undefined,
    `requests ${fmtInt(view.requestsTotal)}`,
    view.gateRejectionsTotal !== null ? `gate rejections ${fmtInt(view.gateRejectionsTotal)}` : undefined,
  ].filter(Boolean);
  lines.push(extra.join(' · '));

  const h = view.diverted;
  const blockSize = r.blockSize ?? o.blockSize;
  if (h && h.count > 0) {
    const mean = h.sum / h.count;
    lines.push(
      `diverted overlap  ${h.count} diversions, mean ${mean.toFixed(1)} blocks (${fmtTokens(mean, blockSize)} tokens at ${blockSize} tokens/block)`,
    );
    const span = nonEmptySpan(bucketCounts(h.buckets, h.count));
    const max = Math.max(...span.map((b) => b.count));
    for (const b of span) {
      const label = b.le === Infinity ? `>${fmtCount(b.from)}` : `≤${fmtCount(b.le)}`;
      const tokens = b.le === Infinity ? '' : `${fmtTokens(b.le, blockSize)} tok`;
      lines.push(
        `  ${pad(label, 6)} ${pad(tokens, 10)} ${pad(String(b.count), 6, 'right')}  ${'#'.repeat(Math.max(1, Math.round((b.count / max) * 30)))}`,
      );
    }
  } else if (h) {
    lines.push('diverted overlap  no diversions yet');
  }
  for (const c of r.ownCounters ?? []) lines.push(`its own: ${ownCounterText(c)}`);
  if (view.blind.length > 0) lines.push(`cannot show (${sourceName(view)}): ${view.blind.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

function headerLines(view: FleetView): string[] {
  const r = view.router;
  const parts = [
    r.version ? `routerctl ${r.version}` : undefined,
    r.modelId ? `model ${r.modelId}` : undefined,
    `policy ${r.policy ?? DASH}${r.policyInferred ? ' (from metrics)' : ''}`,
    `limit ${fmtInt(r.workerQueueLimit)}`,
    `floor ${fmtInt(r.saturationQueueFloor)}`,
    r.uptimeS !== null ? `uptime ${fmtDuration(r.uptimeS)}` : undefined,
    r.simulated ? 'SIMULATED' : undefined,
  ].filter(Boolean);
  const out = [`router ${view.replicas.map((x) => x.url).join(', ')} · ${parts.join(' · ')}`];
  const index =
    view.prefixIndex.agree === null
      ? ''
      : ` · index (${view.prefixIndex.source ?? '?'}) ${view.prefixIndex.agree ? 'same on all replicas' : 'differs between replicas'}`;
  out.push(
    `source ${sourceName(view)}${view.mismatched.length > 0 ? ` · replicas disagree on ${view.mismatched.join(', ')}` : ''}${index}`,
  );
  for (const note of view.prefixIndex.notes) out.push(`KV index: ${note}`);
  const lat = view.latency.overall;
  if (lat.requests > 0) {
    out.push(
      `latency since start (${lat.requests} requests)  end-to-end p50 ${fmtQuantileSeconds(lat.e2eP50)} p99 ${fmtQuantileSeconds(lat.e2eP99)} · TTFT p50 ${fmtQuantileSeconds(lat.ttftP50)} p99 ${fmtQuantileSeconds(lat.ttftP99)}`,
    );
  }
  // A replica that does not answer is left out of every figure below: say which.
  for (const d of view.replicas.filter((x) => !x.live)) out.push(`DOWN ${d.url}: ${d.error ?? 'no answer'} (not counted)`);
  return out;
}

/**
 * Each replica's state and the age of its last answer (docs/metrics-and-admin.md
 * §Replica states), one row each, so a draining or down replica is seen before its
 * fleet's figures are read.
 */
function replicaLines(view: FleetView, now: number, c: (s: string, style: Parameters<typeof paint>[1]) => string): string[] {
  const cols = [view.source === 'engine' ? 'ENGINE' : 'REPLICA', 'STATE', 'LAST ANSWER'];
  const rows = view.replicas.map((x) => {
    const age = lastAnswerAgeMs(x, now);
    return { state: replicaState(x), cells: [x.url, replicaState(x), age === null ? 'never' : `${fmtAge(age)} ago`] };
  });
  const widths = cols.map((h, i) => Math.max(h.length, ...rows.map((r) => r.cells[i]!.length)));
  const render = (row: string[]): string =>
    row
      .map((cell, i) => pad(cell, widths[i]!))
      .join('  ')
      .trimEnd();
  const styles = { up: undefined, draining: 'yellow', down: 'red' } as const;
  return [
    render(cols),
    ...rows.map((r) => {
      const style = styles[r.state];
      return style ? c(render(r.cells), style) : render(r.cells);
    }),
  ];
}

function sampleText(w: FleetWorker): string {
  if (w.sampleAgeMs === null) return w.fresh === false ? 'none' : DASH;
  if (w.fresh === false) return `${fmtAge(w.sampleAgeMs)} stale`;
  return w.loadSource === 'push' ? `${fmtAge(w.sampleAgeMs)} push` : fmtAge(w.sampleAgeMs);
}
