/**
 * Readers of what an engine says about itself, shared by the router's worker
 * introspection and `check-config --probe` (docs/engine-load.md, "Introspection").
 */

export interface ModelsInfo {
  ids: string[];
  /** From `owned_by`: the reliable way to tell SGLang from vLLM. */
  engine: 'sglang' | 'vllm' | null;
  /** routerctl's simulator marks its model cards (`"simulated": true`); vLLM has no /server_info to say it. */
  simulated: boolean;
}

/** GET /v1/models: {data: [{id, owned_by, …}]}; null when the body is not that. */
export function parseModels(body: unknown): ModelsInfo | null {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  const ids: string[] = [];
  let engine: ModelsInfo['engine'] = null;
  let simulated = false;
  for (const m of data) {
    const o = (m ?? {}) as { id?: unknown; owned_by?: unknown; simulated?: unknown };
    if (typeof o.id === 'string') ids.push(o.id);
    if (engine === null && (o.owned_by === 'sglang' || o.owned_by === 'vllm')) engine = o.owned_by;
    if (o.simulated === true) simulated = true;
  }
  return { ids, engine, simulated };
}

export interface ServerInfo {
  dpSize: number;
  /** The engine's push channels (SGLang's `kv_events` block), or null when it publishes none. */
  push: PushInfo | null;
  /** routerctl's simulator says so (`"simulated": true`): its KV hashes are the simulator's. */
  simulated: boolean;
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
  const o = (body ?? {}) as { dp_size?: unknown; schedule_policy?: unknown; kv_events?: unknown; simulated?: unknown };
  if (typeof o.dp_size !== 'number' || !Number.isInteger(o.dp_size) || o.dp_size <= 0) return null;
  const policy = typeof o.schedule_policy === 'string' ? o.schedule_policy : null;
  return { dpSize: o.dp_size, push: parsePushInfo(o.kv_events, o.dp_size), simulated: o.simulated === true, schedulePolicy: policy, cacheAwareSchedule: policy !== null && CACHE_AWARE_POLICIES.has(policy) };
}

/**
 * Where an SGLang engine publishes (docs/engine-push.md §Discovery): KV events on
 * `endpoint_port_base + rank`, and, when its load publisher is on, `LoadStat` on
 * `load_endpoint_port_base + rank`. The host may be a wildcard the engine bound to:
 * subscribers then use the worker URL's host.
 */
export interface PushInfo {
  /** The host to connect to; null when the engine bound a wildcard (use the worker URL's host). */
  host: string | null;
  kvPortBase: number;
  kvTopic: string;
  /** Tokens per block in the events (subscribers must hash at this size). */
  blockSize: number | null;
  /** Ranks publishing: one socket per rank. */
  dpSize: number;
  loadPortBase: number | null;
  loadTopic: string;
  /**
   * The replay sockets' base port, when advertised. SGLang does not advertise it (its
   * replay endpoint is a flag of its own); routerctl's simulator does, as
   * `replay_endpoint_port_base`.
   */
  replayPortBase: number | null;
}

const WILDCARD_HOSTS = new Set(['*', '0.0.0.0', '::', '[::]', '']);

function parsePushInfo(v: unknown, dpSize: number): PushInfo | null {
  if (v === null || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  if (o.publisher !== 'zmq' || !isPort(o.endpoint_port_base)) return null;
  const host = typeof o.endpoint_host === 'string' && !WILDCARD_HOSTS.has(o.endpoint_host) ? o.endpoint_host : null;
  const ranks = typeof o.dp_size === 'number' && Number.isInteger(o.dp_size) && o.dp_size > 0 ? o.dp_size : dpSize;
  return {
    host,
    kvPortBase: o.endpoint_port_base,
    kvTopic: typeof o.topic === 'string' ? o.topic : '',
    blockSize: typeof o.block_size === 'number' && Number.isInteger(o.block_size) && o.block_size > 0 ? o.block_size : null,
    dpSize: ranks,
    loadPortBase: isPort(o.load_endpoint_port_base) ? o.load_endpoint_port_base : null,
    loadTopic: typeof o.load_topic === 'string' ? o.load_topic : 'load',
    replayPortBase: isPort(o.replay_endpoint_port_base) ? o.replay_endpoint_port_base : null,
  };
}

function isPort(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v < 65_536;
}

/** The ZMQ address of one rank's publisher: the advertised host, else the worker URL's. */
export function pushEndpoint(workerUrl: string, info: PushInfo, portBase: number, rank: number): string {
  let host = info.host;
  if (host === null) {
    try {
      host = new URL(workerUrl).hostname;
    } catch {
      host = '127.0.0.1';
    }
  }
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return `tcp://${bare.includes(':') ? `[${bare}]` : bare}:${portBase + rank}`;
}

/** JSON.parse that answers undefined instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
