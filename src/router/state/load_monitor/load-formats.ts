import { parsePrometheusText } from '../../../prometheus/index.js';
import type { ParsedFamily } from '../../../prometheus/index.js';
import type { RankReading } from './load-table.js';

export type Readings = Array<readonly [number, RankReading]>;

/** Where a worker's load was read from, in the order the sampler tries them. */
export type LoadSource = 'v1_loads' | 'get_load' | 'metrics';

/**
 * Each parser returns per-rank readings, or undefined when the body is not that
 * format or lacks the waiting count: a reading is never invented from missing fields.
 */
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/** SGLang GET /v1/loads: {loads: [{dp_rank, num_running_reqs, num_waiting_reqs, …}]}. */
export function parseV1Loads(body: unknown): Readings | undefined {
  const loads = (body as { loads?: unknown } | null)?.loads;
  if (!Array.isArray(loads) || loads.length === 0) return undefined;
  const out: Readings = [];
  for (const [i, l] of loads.entries()) {
    if (!l || typeof l !== 'object') return undefined;
    const o = l as Record<string, unknown>;
    const rank = num(o.dp_rank) ?? i;
    const running = num(o.num_running_reqs);
    const waiting = num(o.num_waiting_reqs);
    if (running === undefined || waiting === undefined) return undefined;
    const used = num(o.num_used_tokens) ?? 0;
    const capacity = num(o.max_total_num_tokens) ?? 0;
    const uncached = num(o.num_waiting_uncached_tokens);
    const total = num(o.num_total_tokens);
    const maxRunning = num(o.max_running_requests);
    const reading: RankReading = { running, waiting, usedTokens: used, maxTotalTokens: capacity };
    if (uncached !== undefined && total !== undefined && maxRunning !== undefined) {
      reading.native = { waitingUncachedTokens: uncached, totalTokens: total, maxRunningRequests: maxRunning };
    }
    out.push([rank, reading]);
  }
  return out;
}

/**
 * SGLang GET /get_load in its array shapes (mid-2025 and the current shim):
 * [{dp_rank, num_reqs (= running + waiting), num_waiting_reqs, num_tokens, …}].
 * The oldest shape, {"load": N}, carries no waiting count and yields undefined.
 */
export function parseGetLoad(body: unknown): Readings | undefined {
  if (!Array.isArray(body) || body.length === 0) return undefined;
  const out: Readings = [];
  for (const [i, l] of body.entries()) {
    if (!l || typeof l !== 'object') return undefined;
    const o = l as Record<string, unknown>;
    const waiting = num(o.num_waiting_reqs);
    const reqs = num(o.num_reqs);
    if (waiting === undefined || reqs === undefined) return undefined;
    out.push([num(o.dp_rank) ?? i, { running: Math.max(0, reqs - waiting), waiting, usedTokens: num(o.num_tokens) ?? num(o.num_pages) ?? 0, maxTotalTokens: 0 }]);
  }
  return out;
}

/** Whether a /get_load body is the legacy {"load": N} shape (reachable, but no queue depth). */
export function isLegacyLoadShape(body: unknown): boolean {
  return !!body && typeof body === 'object' && !Array.isArray(body) && num((body as { load?: unknown }).load) !== undefined;
}

/**
 * Prometheus /metrics of SGLang (sglang:num_queue_reqs, per dp_rank) or vLLM
 * (vllm:num_requests_waiting, per engine). Ranks come from the dp_rank / engine label.
 */
export function parseEngineMetrics(text: string): Readings | undefined {
  const families = parsePrometheusText(text);
  const sglang = fromFamilies(families.get('sglang:num_queue_reqs'), families.get('sglang:num_running_reqs'), families.get('sglang:num_used_tokens'), 'dp_rank');
  if (sglang) return sglang;
  return fromFamilies(families.get('vllm:num_requests_waiting'), families.get('vllm:num_requests_running'), undefined, 'engine');
}

function fromFamilies(
  waiting: ParsedFamily | undefined,
  running: ParsedFamily | undefined,
  used: ParsedFamily | undefined,
  rankLabel: string,
): Readings | undefined {
  if (!waiting || waiting.samples.length === 0) return undefined;
  const byRank = new Map<number, RankReading>();
  const rankOf = (labels: Record<string, string>): number => {
    const r = Number(labels[rankLabel] ?? 0);
    return Number.isInteger(r) && r >= 0 ? r : 0;
  };
  for (const s of waiting.samples) {
    if (!Number.isFinite(s.value) || s.value < 0) return undefined;
    const r = byRank.get(rankOf(s.labels)) ?? { running: 0, waiting: 0, usedTokens: 0, maxTotalTokens: 0 };
    r.waiting += s.value;
    byRank.set(rankOf(s.labels), r);
  }
  for (const s of running?.samples ?? []) {
    const r = byRank.get(rankOf(s.labels));
    if (r && Number.isFinite(s.value)) r.running += s.value;
  }
  for (const s of used?.samples ?? []) {
    const r = byRank.get(rankOf(s.labels));
    if (r && Number.isFinite(s.value)) r.usedTokens += s.value;
  }
  return [...byRank.entries()].sort((a, b) => a[0] - b[0]);
}
