import { parseZmqEndpoint } from './push/kv-events-rule.js';
import type { PushInfo } from './push/push-info.js';

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
  const o = (body ?? {}) as {
    dp_size?: unknown;
    schedule_policy?: unknown;
    kv_events?: unknown;
    kv_events_config?: unknown;
    simulated?: unknown;
  };
  if (typeof o.dp_size !== 'number' || !Number.isInteger(o.dp_size) || o.dp_size <= 0) return null;
  const policy = typeof o.schedule_policy === 'string' ? o.schedule_policy : null;
  return {
    dpSize: o.dp_size,
    push: parsePushInfo(o.kv_events, o.dp_size, o.kv_events_config),
    simulated: o.simulated === true,
    schedulePolicy: policy,
    cacheAwareSchedule: policy !== null && CACHE_AWARE_POLICIES.has(policy),
  };
}

const WILDCARD_HOSTS = new Set(['*', '0.0.0.0', '::', '[::]', '']);

/**
 * SGLang's `kv_events` descriptor (docs/engine-push.md §Discovery). `kvEventsConfig` is
 * the engine's raw `--kv-events-config` as /server_info repeats it (a JSON string, or
 * already a mapping): the replay and snapshot endpoints are read from it. A replay key
 * in the descriptor, should a later SGLang add one, wins over it.
 */
function parsePushInfo(v: unknown, dpSize: number, kvEventsConfig: unknown): PushInfo | null {
  if (v === null || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  if (o.publisher !== 'zmq' || !isPort(o.endpoint_port_base)) return null;
  const host = typeof o.endpoint_host === 'string' && !WILDCARD_HOSTS.has(o.endpoint_host) ? o.endpoint_host : null;
  const ranks = typeof o.dp_size === 'number' && Number.isInteger(o.dp_size) && o.dp_size > 0 ? o.dp_size : dpSize;
  const config = engineKvEventsConfig(kvEventsConfig);
  const fromDescriptor =
    tcpEndpoint(o.replay_endpoint) ?? (isPort(o.replay_endpoint_port_base) ? { host, port: o.replay_endpoint_port_base } : null);
  const fromConfig = tcpEndpoint(config?.replay_endpoint);
  const replay = fromDescriptor ?? fromConfig;
  const snapshot = tcpEndpoint(o.snapshot_endpoint) ?? tcpEndpoint(config?.snapshot_endpoint);
  return {
    host,
    kvPortBase: o.endpoint_port_base,
    kvTopic: typeof o.topic === 'string' ? o.topic : '',
    blockSize: typeof o.block_size === 'number' && Number.isInteger(o.block_size) && o.block_size > 0 ? o.block_size : null,
    dpSize: ranks,
    loadPortBase: isPort(o.load_endpoint_port_base) ? o.load_endpoint_port_base : null,
    loadTopic: typeof o.load_topic === 'string' ? o.load_topic : 'load',
    replayHost: replay?.host ?? null,
    replayPortBase: replay?.port ?? null,
    replayFrom: fromDescriptor ? 'descriptor' : fromConfig ? 'kv_events_config' : null,
    snapshotHost: snapshot?.host ?? null,
    snapshotPortBase: snapshot?.port ?? null,
  };
}

/**
 * vLLM's account of its KV event publishers, `GET /kv_event_sources` (docs/engine-push.md
 * §Discovery): `{"0": {"publisher": "zmq", "endpoint": …, "replay_endpoint": …, "topic": …},
 * "1": …}`, one resolved `--kv-events-config` per DP rank, its ports already offset by the
 * rank. vLLM's publisher binds an endpoint whose host is a wildcard, and connects to any
 * other (its `_is_bind_endpoint`): the router then connects to the worker URL's host for
 * the first, and binds the address itself for the second (`kvBind`). Its replay socket
 * is always the engine's to bind. Null when it publishes nothing (`{}`), or the ranks do
 * not follow one another on consecutive ports of one host.
 */
export function parseKvEventSources(body: unknown): PushInfo | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const ranks = Object.entries(body as Record<string, unknown>);
  if (ranks.length === 0 || ranks.length > 1024) return null;
  const byRank = new Map<number, Record<string, unknown>>();
  for (const [k, v] of ranks) {
    if (!/^\d+$/.test(k) || v === null || typeof v !== 'object') return null;
    byRank.set(Number(k), v as Record<string, unknown>);
  }
  const first = byRank.get(0);
  if (first === undefined || first.publisher !== 'zmq' || first.enable_kv_cache_events === false) return null;
  const base = rawTcp(first.endpoint);
  if (base === null) return null;
  const replay = tcpEndpoint(first.replay_endpoint);
  const topic = typeof first.topic === 'string' ? first.topic : '';
  for (let r = 1; r < byRank.size; r++) {
    const c = byRank.get(r);
    const e = c === undefined ? null : rawTcp(c.endpoint);
    if (e === null || e.host !== base.host || e.port !== base.port + r) return null;
  }
  const bind = !WILDCARD_HOSTS.has(base.host);
  return {
    host: bind ? base.host : null,
    kvPortBase: base.port,
    kvTopic: topic,
    blockSize: null,
    dpSize: byRank.size,
    loadPortBase: null,
    loadTopic: 'load',
    replayHost: replay?.host ?? null,
    replayPortBase: replay?.port ?? null,
    replayFrom: replay ? 'descriptor' : null,
    snapshotHost: null,
    snapshotPortBase: null,
    ...(bind ? { kvBind: true } : {}),
  };
}

/** `tcp://host:port` as written, the host kept even when a wildcard; null for anything else. */
function rawTcp(v: unknown): { host: string; port: number } | null {
  if (typeof v !== 'string') return null;
  const m = /^tcp:\/\/(\[[^\]]+\]|[^:/\s]+):(\d+)$/.exec(v.trim());
  if (!m || !isPort(Number(m[2]))) return null;
  return { host: m[1]!, port: Number(m[2]) };
}

/** The engine's `--kv-events-config` as a mapping: parsed when it is a JSON string; null when it is neither. */
function engineKvEventsConfig(v: unknown): Record<string, unknown> | null {
  const parsed = typeof v === 'string' ? parseJson(v) : v;
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
}

/** A `tcp://host:port` the router can connect to (a wildcard host as null); null for anything else. */
function tcpEndpoint(v: unknown): { host: string | null; port: number } | null {
  if (typeof v !== 'string') return null;
  const e = parseZmqEndpoint(v);
  return typeof e === 'string' ? null : e;
}

function isPort(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v < 65_536;
}

/** The ZMQ address of one rank's publisher: the advertised host, else the worker URL's. */
export function pushEndpoint(workerUrl: string, info: PushInfo, portBase: number, rank: number): string {
  return tcpAddress(workerUrl, info.host, portBase + rank);
}

/**
 * The ZMQ address of one rank's KV events: where the router connects, or, when the
 * router binds it (`kvBind`), the address it binds as written, a wildcard meaning every
 * interface.
 */
export function kvEventsEndpoint(workerUrl: string, info: PushInfo, rank: number): string {
  if (info.kvBind === true) return `tcp://${info.host ?? '*'}:${info.kvPortBase + rank}`;
  return pushEndpoint(workerUrl, info, info.kvPortBase, rank);
}

/**
 * The replay ROUTER socket of every DP rank (`tcp://host:port`, rank r on the base
 * port + r), on the replay host or, for a wildcard, the worker URL's; [] when the
 * worker has no replay endpoint.
 */
export function replayEndpoints(workerUrl: string, info: PushInfo): string[] {
  const base = info.replayPortBase;
  if (base === null) return [];
  return Array.from({ length: info.dpSize }, (_, r) => tcpAddress(workerUrl, info.replayHost, base + r));
}

function tcpAddress(workerUrl: string, advertised: string | null, port: number): string {
  let host = advertised;
  if (host === null) {
    try {
      host = new URL(workerUrl).hostname;
    } catch {
      host = '127.0.0.1';
    }
  }
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return `tcp://${bare.includes(':') ? `[${bare}]` : bare}:${port}`;
}

/** JSON.parse that answers undefined instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
