/**
 * Readers of what an engine says about itself, shared by the router's worker
 * introspection and `check-config --probe` (docs/engine-load.md, "Introspection").
 */

export interface ModelsInfo {
  ids: string[];
  /** From `owned_by`: the reliable way to tell SGLang from vLLM. */
  engine: 'sglang' | 'vllm' | null;
}

/** GET /v1/models: {data: [{id, owned_by, …}]}; null when the body is not that. */
export function parseModels(body: unknown): ModelsInfo | null {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  const ids: string[] = [];
  let engine: ModelsInfo['engine'] = null;
  for (const m of data) {
    const o = (m ?? {}) as { id?: unknown; owned_by?: unknown };
    if (typeof o.id === 'string') ids.push(o.id);
    if (engine === null && (o.owned_by === 'sglang' || o.owned_by === 'vllm')) engine = o.owned_by;
  }
  return { ids, engine };
}

export interface ServerInfo {
  dpSize: number;
  /** SGLang --schedule-policy, when the engine says. */
  schedulePolicy: string | null;
  /**
   * The schedule policy is cache-aware (lpm, dfs-weight): only then are the engine's
   * waiting-uncached tokens net of its prefix cache, and comparable across workers.
   */
  cacheAwareSchedule: boolean;
}

const CACHE_AWARE_POLICIES = new Set(['lpm', 'dfs-weight']);

/** SGLang GET /server_info or /get_server_info; null without a usable dp_size. */
export function parseServerInfo(body: unknown): ServerInfo | null {
  const o = (body ?? {}) as { dp_size?: unknown; schedule_policy?: unknown };
  if (typeof o.dp_size !== 'number' || !Number.isInteger(o.dp_size) || o.dp_size <= 0) return null;
  const policy = typeof o.schedule_policy === 'string' ? o.schedule_policy : null;
  return { dpSize: o.dp_size, schedulePolicy: policy, cacheAwareSchedule: policy !== null && CACHE_AWARE_POLICIES.has(policy) };
}

/** JSON.parse that answers undefined instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
