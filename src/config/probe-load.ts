import { parsePrometheusText } from '../prometheus/index.js';
import type { ParsedFamily } from '../prometheus/index.js';

/**
 * What one load endpoint says, summed over DP ranks. `waiting` is null when the
 * endpoint reports load but not the waiting queue (legacy `/get_load` `{"load": N}`);
 * a missing field is unknown, never zero (engine-interface §1.1 advice).
 */
export interface LoadReading {
  waiting: number | null;
  running: number | null;
  /** Ranks the reading covers, when the shape tells. */
  ranks: number | null;
}

/** SGLang `/v1/loads`: `{loads: [{dp_rank, num_waiting_reqs, num_running_reqs, …}]}`. */
export function readV1Loads(body: unknown): LoadReading | null {
  const loads = (body as { loads?: unknown } | null)?.loads;
  if (!Array.isArray(loads) || loads.length === 0) return null;
  const waiting = sumField(loads, 'num_waiting_reqs');
  if (waiting === null) return null;
  return { waiting, running: sumField(loads, 'num_running_reqs'), ranks: loads.length };
}

/**
 * SGLang `/get_load`, any of its three historical shapes: `{"load": N}` (rank 0
 * only), or an array of per-rank objects with `num_waiting_reqs` (older ones may
 * carry only `num_reqs`/`num_tokens`, which still proves the engine reports load).
 */
export function readGetLoad(body: unknown): LoadReading | null {
  if (Array.isArray(body)) {
    if (body.length === 0) return null;
    const waiting = sumField(body, 'num_waiting_reqs');
    if (waiting === null && sumField(body, 'num_reqs') === null) return null;
    return { waiting, running: null, ranks: body.length };
  }
  const load = (body as { load?: unknown } | null)?.load;
  if (typeof load === 'number' && Number.isFinite(load)) return { waiting: null, running: null, ranks: null };
  return null;
}

/** `/metrics`: SGLang `sglang:num_queue_reqs` (per `dp_rank`) or vLLM `vllm:num_requests_waiting` (per `engine`). */
export function readMetricsLoad(text: string): LoadReading | null {
  const families = parsePrometheusText(text);
  const flavours = [
    { waiting: 'sglang:num_queue_reqs', running: 'sglang:num_running_reqs', rank: 'dp_rank' },
    { waiting: 'vllm:num_requests_waiting', running: 'vllm:num_requests_running', rank: 'engine' },
  ];
  for (const f of flavours) {
    const waiting = families.get(f.waiting);
    if (!waiting || waiting.samples.length === 0) continue;
    const ranks = new Set(waiting.samples.map((s) => s.labels[f.rank] ?? ''));
    return { waiting: sum(waiting), running: sum(families.get(f.running)), ranks: ranks.size };
  }
  return null;
}

function sum(family: ParsedFamily | undefined): number | null {
  if (!family || family.samples.length === 0) return null;
  return family.samples.reduce((acc, s) => acc + s.value, 0);
}

function sumField(items: unknown[], field: string): number | null {
  let total = 0;
  for (const item of items) {
    const v = (item as Record<string, unknown> | null)?.[field];
    if (typeof v !== 'number' || !Number.isFinite(v)) return null;
    total += v;
  }
  return total;
}
