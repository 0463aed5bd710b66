import { Box } from 'ink';
import type { ReactElement } from 'react';
import { DASH, fmtAge, fmtDuration, fmtInt, fmtQuantileSeconds, fmtRate } from '../../fleet/index.js';
import { RATE_WINDOW_MS, lastAnswerAgeMs, ownCounterText, replicaState, sourceName } from '../../fleet/index.js';
import type { FleetView, ReplicaStatus } from '../../fleet/index.js';
import { Line } from './Line.js';
import type { SegmentInput } from './Line.js';

export interface HeaderProps {
  view: FleetView | undefined;
  /** "routerctl top" or "routerctl serve". */
  title: string;
  /** Where the console connects, for the line shown before the first snapshot. */
  target: string;
  intervalMs: number;
  now: number;
  lines: number;
}

/**
 * Two lines: what this router is (policy, limit, floor, uptime, SIMULATED, each
 * replica's state and the age of its last answer), then where the numbers come from
 * (source and what it cannot show, rate, freshness, replicas that are down or draining).
 */
export function Header({ view, title, target, intervalMs, now, lines }: HeaderProps): ReactElement {
  const first: SegmentInput[] = [{ text: title, bold: true }];
  const second: SegmentInput[] = [];
  if (!view) {
    first.push(`  ${target}`);
    second.push({ text: 'connecting…', dim: true });
  } else {
    const r = view.router;
    // The badge comes first: on a narrow terminal the end of this line is cut off.
    if (r.simulated) first.push('  ', { text: ' SIMULATED ', color: 'magenta', inverse: true, bold: true });
    // What matters most first, the router list (as long as there are replicas) last:
    // on a narrow terminal the end of the line is cut.
    first.push(
      `  ${r.policy ?? 'policy ' + DASH}${r.policyInferred ? '?' : ''}`,
      `  ${gateSegment(r)}`,
      `  floor ${fmtInt(r.saturationQueueFloor)}`,
      r.uptimeS !== null ? `  up ${fmtDuration(r.uptimeS)}` : '',
      r.modelId ? `  ${r.modelId}` : '',
      r.minLoadChoices !== null ? `  min-load ${r.minLoadChoices}` : '',
      `  ${view.replicas.map((x) => replicaLabel(x, now)).join(', ')}`,
    );

    const down = view.replicas.filter((x) => !x.live);
    // A replica that stopped answering goes first, then one that drains: on a narrow
    // terminal the end of the line is cut.
    for (const d of down) {
      const since = d.receivedAt === null ? '' : ` for ${fmtAge(Math.max(0, now - d.receivedAt))}`;
      second.push(
        { text: ` DOWN${since} ${d.url.replace(/^https?:\/\//, '')}: ${d.error ?? 'no answer'} `, color: 'red', inverse: true },
        '  ',
      );
    }
    for (const d of view.replicas.filter((x) => replicaState(x) === 'draining')) {
      second.push({ text: ` DRAINING ${d.url.replace(/^https?:\/\//, '')}: takes no new requests `, color: 'yellow', inverse: true }, '  ');
    }
    second.push(
      `${fmtRate(view.requestsPerS)} req/s (${RATE_WINDOW_MS / 1000}s avg)`,
      // Latency of the window's requests, right after the rate: what an operator asks next.
      latencySegment(view),
      `  source ${sourceName(view)}${view.source === 'admin' ? ` (every ${fmtAge(intervalMs)})` : ''}`,
      `  updated ${fmtAge(Math.max(0, now - view.at))} ago`,
    );
    // A stream event over its budget leaves some workers' counters for the next ones (docs/metrics-and-admin.md §Stream deltas).
    if (view.behind > 0) second.push({ text: `  ${fmtInt(view.behind)} workers' counters catching up`, dim: true });
    if (view.replicas.length > 1)
      second.push(
        `  ${view.source === 'engine' ? 'engines' : 'replicas'} ${view.replicas.length - down.length}/${view.replicas.length} live`,
      );
    if (view.mismatched.length > 0) second.push('  ', { text: `replicas disagree on ${view.mismatched.join(', ')}`, color: 'yellow' });
    if (view.prefixIndex.agree !== null) {
      const from = view.prefixIndex.source ?? '?';
      second.push(
        '  ',
        view.prefixIndex.agree
          ? `index (${from}) same on all`
          : { text: `index (${from}) differs between replicas`, color: from === 'events' ? 'yellow' : undefined },
      );
    }
    for (const c of view.router.ownCounters ?? []) second.push({ text: `  its own: ${ownCounterText(c)}`, dim: true });
    if (view.blind.length > 0) second.push({ text: `  cannot show: ${view.blind.join(', ')}`, dim: true });
  }
  return (
    <Box flexDirection="column">
      {lines >= 1 ? <Line segments={first} /> : null}
      {lines >= 2 ? <Line segments={second} /> : null}
    </Box>
  );
}

/**
 * A replica as the router list names it: its address, its state and how long ago it
 * last answered (docs/metrics-and-admin.md §Replica states).
 */
function replicaLabel(r: ReplicaStatus, now: number): string {
  const age = lastAnswerAgeMs(r, now);
  return `${r.url.replace(/^https?:\/\//, '')} ${replicaState(r)} ${age === null ? '(never answered)' : `${fmtAge(age)} ago`}`;
}

/**
 * The window's latency. When the source measures latency but no request finished in
 * the window, the header says so rather than dropping the figures: a fleet whose
 * requests all stall (prefill ahead of every decode) is when the operator looks here.
 */
function latencySegment(view: FleetView): SegmentInput {
  const lat = view.latency.window;
  if (lat.e2eP50 !== null)
    return `  e2e p50 ${fmtQuantileSeconds(lat.e2eP50)} p99 ${fmtQuantileSeconds(lat.e2eP99)}${lat.ttftP50 !== null ? `  TTFT p50 ${fmtQuantileSeconds(lat.ttftP50)} p99 ${fmtQuantileSeconds(lat.ttftP99)}` : ''}`;
  // No rates yet (one snapshot so far), or a source without latency histograms: nothing to say.
  if (view.requestsPerS === null || view.latency.overall.requests === 0 || lat.requests > 0) return '';
  const text = `  e2e: none finished in ${RATE_WINDOW_MS / 1000}s`;
  // Requests arriving and none finishing is a stall; an idle fleet finishing none is not.
  return view.requestsPerS > 0 ? { text, color: 'yellow' } : { text, dim: true };
}

/** The gate as the header names it: the fixed limit as before, or an experimental mode with what it has in force now. */
function gateSegment(r: FleetView['router']): string {
  // The TTFT goal, where admission holds requests to it: it decides who is shed.
  const admission = r.admission === 'slo' ? `, admit ≤ ${fmtInt(r.ttftSloMs ?? null)} ms` : '';
  if (r.gateMode === 'auto') return `gate auto, limit ${fmtInt(r.workerQueueLimit)} now${admission}`;
  if (r.gateMode === 'tokens') return `gate tokens ≥ ${fmtInt(r.gateTokens ?? null)}${admission}`;
  if (r.gateMode === 'slo') return `gate slo ≤ ${fmtInt(r.ttftSloMs ?? null)} ms${r.admission === 'slo' ? ' +admission' : ''}`;
  return `limit ${fmtInt(r.workerQueueLimit)}${admission}`;
}
