/**
 * The one reader of engine load replies, used by the router's sampler and by
 * `check-config --probe` alike, so the two can never disagree about an engine.
 * Every shape and field is described in docs/engine-load.md; a field an engine does
 * not send is left undefined (unknown), never read as zero.
 */
import { parsePrometheusText } from '../prometheus/index.js';
import type { ParsedFamily, ParsedSample } from '../prometheus/index.js';

/** One DP rank's load, in the engine's own terms (docs/engine-load.md, "Fields"). */
export interface RankReading {
  /** Requests in the running batch. */
  running: number;
  /** Requests waiting for admission: what the queue gate compares with the limit. */
  waiting: number;
  /** KV tokens in use; undefined when the shape does not say. */
  usedTokens?: number;
  /** KV capacity in tokens; undefined (or 0) when unknown. */
  maxTotalTokens?: number;
  /** KV tokens in use plus the prompt lengths of queued requests. */
  totalTokens?: number;
  maxRunningRequests?: number;
  /** Queued prompt tokens not covered by the engine's prefix cache (SGLang; raw lengths unless its schedule policy is cache-aware). */
  waitingUncachedTokens?: number;
}

/** Per-rank readings, ascending by rank, no rank twice. */
export type Readings = ReadonlyArray<readonly [rank: number, reading: RankReading]>;

/**
 * The most DP ranks one worker may report. More than that is not a real engine (DP
 * sizes are a handful, at most a few hundred), so such a reply is unreadable rather
 * than truncated: a partial sum would under-report the queue.
 */
export const MAX_RANKS_PER_WORKER = 1024;

export type LoadShape =
  /** SGLang GET /v1/loads, JSON, one entry per DP rank. */
  | 'sglang_v1_loads'
  /** SGLang GET /get_load as an array of ranks (mid-2025, and the current shim). */
  | 'sglang_get_load'
  /** SGLang GET /get_load {"load": N} (early 2025): proves reporting, carries no queue length. */
  | 'sglang_get_load_legacy'
  | 'sglang_metrics'
  | 'vllm_metrics';

/** The load endpoints, in the order both the sampler and the probe try them. */
export type LoadSource = 'v1_loads' | 'get_load' | 'metrics';
export const LOAD_SOURCES: readonly LoadSource[] = ['v1_loads', 'get_load', 'metrics'];
export const LOAD_PATHS: Readonly<Record<LoadSource, string>> = {
  v1_loads: '/v1/loads?include=core',
  get_load: '/get_load',
  metrics: '/metrics',
};
/** The path without its query, for people. */
export const LOAD_ENDPOINTS = { v1_loads: '/v1/loads', get_load: '/get_load', metrics: '/metrics' } as const satisfies Record<
  LoadSource,
  string
>;

export type LoadRead =
  | { ok: true; shape: LoadShape; readings: Readings }
  /** `shape` is set when the body is a known shape that lacks the queue length (legacy /get_load). */
  | { ok: false; detail: string; shape?: LoadShape };

/** Read one load endpoint's 2xx body. */
export function readLoadReply(source: LoadSource, body: string): LoadRead {
  if (source === 'metrics') return readMetricsText(body);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, detail: 'not JSON' };
  }
  return source === 'v1_loads' ? readV1Loads(json) : readGetLoad(json);
}

// ------------------------------------------------------------------ JSON shapes

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const rankNumber = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

/** SGLang /v1/loads: {loads: [{dp_rank, num_running_reqs, num_waiting_reqs, num_used_tokens, …}]}. */
export function readV1Loads(body: unknown): LoadRead {
  const loads = (body as { loads?: unknown } | null)?.loads;
  if (!Array.isArray(loads) || loads.length === 0) return { ok: false, detail: 'no "loads" array' };
  return perRank('sglang_v1_loads', loads, (o) => {
    const running = count(o.num_running_reqs);
    const waiting = count(o.num_waiting_reqs);
    if (running === undefined || waiting === undefined) return undefined;
    return {
      running,
      waiting,
      usedTokens: count(o.num_used_tokens),
      maxTotalTokens: count(o.max_total_num_tokens),
      totalTokens: count(o.num_total_tokens),
      maxRunningRequests: count(o.max_running_requests),
      waitingUncachedTokens: count(o.num_waiting_uncached_tokens),
    };
  });
}

/**
 * SGLang /get_load. The array shapes: `num_reqs` is running + waiting, and
 * `num_tokens` is KV in use PLUS the prompt lengths of queued requests (the
 * scheduler's num_total_tokens), not KV in use; the current shim adds
 * `num_pending_tokens` (= total − used), from which KV in use follows. The object
 * shape {"load": N} carries no queue length. Forks' `num_pages` is in pages of an
 * unknown size and is ignored.
 */
export function readGetLoad(body: unknown): LoadRead {
  if (Array.isArray(body)) {
    if (body.length === 0) return { ok: false, detail: 'empty array' };
    return perRank('sglang_get_load', body, (o) => {
      const waiting = count(o.num_waiting_reqs);
      const reqs = count(o.num_reqs);
      if (waiting === undefined || reqs === undefined || reqs < waiting) return undefined;
      const total = count(o.num_tokens);
      const pending = count(o.num_pending_tokens);
      return {
        running: reqs - waiting,
        waiting,
        totalTokens: total,
        usedTokens: total !== undefined && pending !== undefined && pending <= total ? total - pending : undefined,
      };
    });
  }
  if (body !== null && typeof body === 'object' && count((body as { load?: unknown }).load) !== undefined) {
    return { ok: false, shape: 'sglang_get_load_legacy', detail: 'legacy {"load": N} shape, without a queue length' };
  }
  return { ok: false, detail: 'neither an array of ranks nor {"load": N}' };
}

function perRank(shape: LoadShape, items: readonly unknown[], read: (o: Record<string, unknown>) => RankReading | undefined): LoadRead {
  if (items.length > MAX_RANKS_PER_WORKER) return { ok: false, detail: `more than ${MAX_RANKS_PER_WORKER} ranks` };
  const out: Array<[number, RankReading]> = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === null || typeof item !== 'object') return { ok: false, detail: `rank entry ${i} is not an object` };
    const o = item as Record<string, unknown>;
    const reading = read(o);
    if (reading === undefined) return { ok: false, detail: `rank entry ${i} lacks the queue counts` };
    out.push([rankNumber(o.dp_rank) ?? i, reading]);
  }
  return finish(shape, out);
}

function finish(shape: LoadShape, out: Array<[number, RankReading]>): LoadRead {
  out.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < out.length; i++) if (out[i]![0] === out[i - 1]![0]) return { ok: false, detail: `rank ${out[i]![0]} reported twice` };
  return { ok: true, shape, readings: out };
}

// ------------------------------------------------------------------ Prometheus

/** Prometheus /metrics of SGLang (`sglang:` names) or vLLM (`vllm:` names). */
export function readMetricsText(text: string): LoadRead {
  const families = parsePrometheusText(text);
  if (families.has('sglang:num_queue_reqs')) return readSglangMetrics(families);
  if (families.has('vllm:num_requests_waiting')) return readVllmMetrics(families);
  return { ok: false, detail: 'no sglang:num_queue_reqs or vllm:num_requests_waiting' };
}

/** Samples of the family's own name: never a `_created` or other suffixed series. */
function own(family: ParsedFamily | undefined): ParsedSample[] {
  if (family === undefined) return [];
  return family.samples.filter((s) => s.name === family.name && Number.isFinite(s.value) && s.value >= 0);
}

const labelRank = (v: string | undefined): number | undefined => {
  if (v === undefined) return 0;
  if (!/^\d{1,9}$/.test(v)) return undefined;
  return Number(v);
};

/**
 * SGLang scheduler gauges. With --enable-metrics-for-all-schedulers every TP (and
 * PP) rank of a DP rank exports the same queue, so summing them would multiply it:
 * for each DP rank only the scheduler with the lowest tp_rank, then the lowest
 * pp_rank, is counted — the one that also publishes LoadStat (docs/engine-load.md).
 * Picking the lowest rather than "0" keeps DP-attention deployments right, where a DP
 * rank's first scheduler may carry a global tp_rank other than 0.
 */
function readSglangMetrics(families: Map<string, ParsedFamily>): LoadRead {
  const waiting = own(families.get('sglang:num_queue_reqs'));
  if (waiting.length === 0) return { ok: false, detail: 'sglang:num_queue_reqs has no samples' };
  // dp rank -> the chosen scheduler (tp, pp)
  const chosen = new Map<number, { tp: number; pp: number }>();
  for (const s of waiting) {
    const dp = labelRank(s.labels.dp_rank);
    const tp = labelRank(s.labels.tp_rank);
    const pp = labelRank(s.labels.pp_rank);
    if (dp === undefined || tp === undefined || pp === undefined) return { ok: false, detail: 'unreadable rank label' };
    const c = chosen.get(dp);
    if (c === undefined || tp < c.tp || (tp === c.tp && pp < c.pp)) chosen.set(dp, { tp, pp });
  }
  if (chosen.size > MAX_RANKS_PER_WORKER) return { ok: false, detail: `more than ${MAX_RANKS_PER_WORKER} ranks` };
  const sumOf = (name: string): Map<number, number> => {
    const sums = new Map<number, number>();
    for (const s of own(families.get(name))) {
      const dp = labelRank(s.labels.dp_rank);
      if (dp === undefined) continue;
      const c = chosen.get(dp);
      if (c === undefined || labelRank(s.labels.tp_rank) !== c.tp || labelRank(s.labels.pp_rank) !== c.pp) continue;
      sums.set(dp, (sums.get(dp) ?? 0) + s.value);
    }
    return sums;
  };
  const waits = sumOf('sglang:num_queue_reqs');
  const runs = sumOf('sglang:num_running_reqs');
  const used = sumOf('sglang:num_used_tokens');
  const out: Array<[number, RankReading]> = [];
  for (const dp of chosen.keys()) {
    const running = runs.get(dp);
    if (running === undefined) return { ok: false, detail: `sglang:num_running_reqs missing for dp_rank ${dp}` };
    out.push([dp, { running, waiting: waits.get(dp)!, usedTokens: used.get(dp) }]);
  }
  return finish('sglang_metrics', out);
}

/**
 * vLLM gauges, one DP engine per `engine` label (absent on older vLLM: one engine).
 * KV usage is a fraction (`vllm:kv_cache_usage_perc`, formerly
 * `vllm:gpu_cache_usage_perc`); it becomes tokens only when `vllm:cache_config_info`
 * tells the capacity (num_gpu_blocks × block_size).
 */
function readVllmMetrics(families: Map<string, ParsedFamily>): LoadRead {
  const rankOf = (s: ParsedSample): number | undefined => labelRank(s.labels.engine);
  const sumOf = (family: ParsedFamily | undefined): Map<number, number> | undefined => {
    const sums = new Map<number, number>();
    for (const s of own(family)) {
      const r = rankOf(s);
      if (r === undefined) return undefined;
      sums.set(r, (sums.get(r) ?? 0) + s.value);
    }
    return sums;
  };
  const waits = sumOf(families.get('vllm:num_requests_waiting'));
  const runs = sumOf(families.get('vllm:num_requests_running'));
  if (waits === undefined || runs === undefined) return { ok: false, detail: 'unreadable engine label' };
  if (waits.size === 0) return { ok: false, detail: 'vllm:num_requests_waiting has no samples' };
  if (waits.size > MAX_RANKS_PER_WORKER) return { ok: false, detail: `more than ${MAX_RANKS_PER_WORKER} ranks` };
  const usage = sumOf(families.get('vllm:kv_cache_usage_perc') ?? families.get('vllm:gpu_cache_usage_perc')) ?? new Map<number, number>();
  const capacity = vllmCapacity(families.get('vllm:cache_config_info'));
  const out: Array<[number, RankReading]> = [];
  for (const [rank, waiting] of waits) {
    const running = runs.get(rank);
    if (running === undefined) return { ok: false, detail: `vllm:num_requests_running missing for engine ${rank}` };
    const cap = capacity.get(rank) ?? capacity.get(-1);
    const u = usage.get(rank);
    out.push([
      rank,
      {
        running,
        waiting,
        maxTotalTokens: cap,
        usedTokens: cap !== undefined && u !== undefined ? Math.round(Math.min(1, u) * cap) : undefined,
      },
    ]);
  }
  return finish('vllm_metrics', out);
}

/** KV capacity in tokens per engine (-1: for every engine) from the info metric's labels. */
function vllmCapacity(info: ParsedFamily | undefined): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of info?.samples ?? []) {
    const blocks = Number(s.labels.num_gpu_blocks);
    const size = Number(s.labels.block_size);
    if (!(Number.isInteger(blocks) && blocks > 0 && Number.isInteger(size) && size > 0)) continue;
    const r = s.labels.engine === undefined || s.labels.engine === '' ? -1 : labelRank(s.labels.engine);
    if (r !== undefined) out.set(r, blocks * size);
  }
  return out;
}

// ------------------------------------------------------------------ totals

/** A worker's load summed over its ranks; a field is null when some rank does not report it. */
export interface LoadSummary {
  ranks: number;
  waiting: number;
  running: number;
  usedTokens: number | null;
  totalTokens: number | null;
  maxTotalTokens: number | null;
  maxRunningRequests: number | null;
  waitingUncachedTokens: number | null;
}

export function summarizeLoad(readings: Readings): LoadSummary {
  const sum = (pick: (r: RankReading) => number | undefined): number | null => {
    let total = 0;
    for (const [, r] of readings) {
      const v = pick(r);
      if (v === undefined) return null;
      total += v;
    }
    return total;
  };
  return {
    ranks: readings.length,
    waiting: sum((r) => r.waiting) ?? 0,
    running: sum((r) => r.running) ?? 0,
    usedTokens: sum((r) => r.usedTokens),
    totalTokens: sum((r) => r.totalTokens),
    maxTotalTokens: sum((r) => (r.maxTotalTokens === 0 ? undefined : r.maxTotalTokens)),
    maxRunningRequests: sum((r) => r.maxRunningRequests),
    waitingUncachedTokens: sum((r) => r.waitingUncachedTokens),
  };
}

/** vLLM's KV block size from its /metrics (`vllm:cache_config_info{block_size=…}`); null when it does not say. */
export function vllmBlockSize(metricsText: string): number | null {
  for (const s of parsePrometheusText(metricsText).get('vllm:cache_config_info')?.samples ?? []) {
    const size = Number(s.labels.block_size);
    if (Number.isInteger(size) && size > 0) return size;
  }
  return null;
}
