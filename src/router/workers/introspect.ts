import { request } from 'undici';
import type { Dispatcher } from 'undici';
import type { WorkerInfo } from './worker.js';

/**
 * Ask a worker what it is: its models (/v1/models) and its DP size (/server_info or
 * /get_server_info, SGLang only). Each call is bounded by `timeoutMs`; a worker that
 * answers neither is "unknown", not an error: it stays routable.
 */
export async function introspectWorker(url: string, timeoutMs: number, dispatcher?: Dispatcher): Promise<WorkerInfo & { reachable: boolean }> {
  const get = async (path: string): Promise<unknown> => {
    const res = await request(url + path, {
      method: 'GET',
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      ...(dispatcher ? { dispatcher } : {}),
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    try {
      return await res.body.json();
    } catch {
      return undefined;
    }
  };
  let reachable = false;
  let models: string[] = [];
  let flavor: WorkerInfo['flavor'] = 'unknown';
  let dpSize: number | undefined;
  let nativeScheduling = false;
  try {
    const m = (await get('/v1/models')) as { data?: Array<{ id?: unknown; owned_by?: unknown }> } | undefined;
    reachable = true;
    if (m && Array.isArray(m.data)) {
      models = m.data.map((d) => d.id).filter((id): id is string => typeof id === 'string');
      const owner = m.data[0]?.owned_by;
      if (owner === 'sglang' || owner === 'vllm') flavor = owner;
    }
  } catch {
    return { reachable: false, models, flavor, dpSize, nativeScheduling };
  }
  for (const path of ['/server_info', '/get_server_info']) {
    try {
      const info = (await get(path)) as { dp_size?: unknown; schedule_policy?: unknown } | undefined;
      if (info && Number.isInteger(info.dp_size) && (info.dp_size as number) > 0) {
        dpSize = info.dp_size as number;
        nativeScheduling = info.schedule_policy === 'lpm' || info.schedule_policy === 'dfs-weight';
        break;
      }
    } catch {
      break;
    }
  }
  return { reachable, models, flavor, dpSize, nativeScheduling };
}
