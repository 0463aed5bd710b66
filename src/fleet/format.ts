import { isQueued } from '../contract/index.js';
import type { FleetView, OwnCounter } from './view-model.js';
/** Text helpers shared by the console and the plain `--once` table. */

export const DASH = '–';

export function fmtInt(v: number | null | undefined): string {
  return v === null || v === undefined ? DASH : String(Math.round(v));
}

/** A rate per second with at most one decimal; `–` when unknown. */
export function fmtRate(v: number | null | undefined): string {
  if (v === null || v === undefined) return DASH;
  if (v === 0) return '0';
  if (v >= 100) return String(Math.round(v));
  return v.toFixed(1);
}

export function fmtPct(v: number | null | undefined): string {
  return v === null || v === undefined ? DASH : `${(v * 100).toFixed(1)}%`;
}

/** 950 → "950", 1234 → "1.2k", 2_500_000 → "2.5M". */
export function fmtCount(v: number | null | undefined): string {
  if (v === null || v === undefined) return DASH;
  if (Math.abs(v) < 1000) return String(Math.round(v));
  if (Math.abs(v) < 1e6) return `${(v / 1000).toFixed(v < 10_000 ? 1 : 0)}k`;
  return `${(v / 1e6).toFixed(1)}M`;
}

export function fmtAge(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return DASH;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return fmtDuration(ms / 1000);
}

/** A duration given in seconds (a latency quantile) as fmtAge shows milliseconds; DASH when unknown. */
export function fmtSeconds(s: number | null | undefined): string {
  return s === null || s === undefined ? DASH : fmtAge(s * 1000);
}

/** Seconds as "45s", "12m03s", "3h12m", "2d04h". */
export function fmtDuration(s: number | null | undefined): string {
  if (s === null || s === undefined) return DASH;
  const t = Math.floor(s);
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, '0')}s`;
  if (t < 86_400) return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(t / 86_400)}d${String(Math.floor((t % 86_400) / 3600)).padStart(2, '0')}h`;
}

/** "http://10.0.0.1:30000" → "10.0.0.1:30000"; longer than `width`: cut from the left, keeping the port. */
export function shortUrl(url: string, width = Infinity): string {
  const s = url.replace(/^https?:\/\//, '');
  if (s.length <= width) return s;
  if (width <= 1) return s.slice(-Math.max(0, width));
  return `…${s.slice(s.length - width + 1)}`;
}

export function pad(s: string, width: number, align: 'left' | 'right' = 'left'): string {
  if (s.length > width) return width <= 0 ? '' : s.slice(0, width);
  return align === 'left' ? s.padEnd(width) : s.padStart(width);
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** A horizontal bar of `width` cells for `value / max`, in eighths of a cell; pads with `fill`. */
export function bar(value: number, max: number, width: number, fill = ' '): string {
  if (width <= 0) return '';
  const frac = max > 0 ? Math.max(0, Math.min(1, value / max)) : 0;
  const eighths = Math.round(frac * width * 8);
  const full = Math.floor(eighths / 8);
  const part = EIGHTHS[eighths % 8]!;
  const s = '█'.repeat(full) + part;
  return s + fill.repeat(Math.max(0, width - full - (part ? 1 : 0)));
}

export type Level = 'ok' | 'warn' | 'over' | 'unknown';

/** Queue level against the limit read from the router: below 70% ok, from 70% warn, queued by the gate's rule (contract/queue-rule.ts): over. */
export function waitingLevel(waiting: number | null, limit: number | null): Level {
  if (waiting === null) return 'unknown';
  if (limit === null) return 'ok';
  if (isQueued(waiting, limit)) return 'over';
  if (waiting >= 0.7 * limit) return 'warn';
  return 'ok';
}

/** A block count as its token estimate, "≈1.0k". */
export function fmtTokens(blocks: number, blockSize: number): string {
  return `≈${fmtCount(blocks * blockSize)}`;
}

/** Per-bucket (not cumulative) counts of a cumulative histogram, with each bucket's lower bound. */
export function bucketCounts(
  buckets: ReadonlyArray<{ le: number; count: number }>,
  total: number,
): Array<{ from: number; le: number; count: number }> {
  const out: Array<{ from: number; le: number; count: number }> = [];
  let prev = 0;
  let prevLe = 0;
  for (const b of buckets) {
    out.push({ from: prevLe, le: b.le, count: Math.max(0, b.count - prev) });
    prev = b.count;
    prevLe = b.le;
  }
  if (total > prev) out.push({ from: prevLe, le: Infinity, count: total - prev });
  return out;
}

/** The bucket rows worth drawing: from the first non-empty to the last non-empty one. */
export function nonEmptySpan<T extends { count: number }>(rows: readonly T[]): T[] {
  const first = rows.findIndex((r) => r.count > 0);
  if (first < 0) return [];
  let last = rows.length - 1;
  while (last > first && rows[last]!.count === 0) last--;
  return rows.slice(first, last + 1);
}

/** The source a view was read from, as the console and `top --once` name it. */
export function sourceName(view: FleetView): string {
  if (view.source === 'admin') return 'admin API';
  if (view.source === 'prometheus') return view.router.foreign ? `prometheus /metrics (${view.router.foreign})` : 'prometheus /metrics';
  if (view.source === 'engine') return "engines' load endpoints (no router)";
  if (view.source === 'mixed') return 'mixed (admin API and /metrics)';
  return 'none';
}

/** Another router's own counter as one phrase: `metric{by}` and its totals, then what it means. */
export function ownCounterText(c: OwnCounter): string {
  const totals = Object.entries(c.counts).map(([k, v]) => (k === '' ? fmtInt(v) : `${k} ${fmtInt(v)}`));
  return `${c.metric}${c.by !== null ? `{${c.by}}` : ''} ${totals.join(' · ')} (${c.means})`;
}
