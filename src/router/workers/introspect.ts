import type { Dispatcher } from 'undici';
import { getEngineReply, parseJson, parseKvEventSources, parseModels, parseServerInfo, vllmBlockSize } from '../../engines/index.js';
import type { WorkerInfo } from '../upstream/worker.js';

/**
 * Ask a worker what it is: its models (/v1/models) and its DP size, schedule policy
 * and push channels (/server_info or /get_server_info, SGLang only), and vLLM's KV event
 * publishers (/kv_event_sources) and block size (`vllm:cache_config_info` on its /metrics). Each call is bounded by
 * `timeoutMs` and every reply by the engine byte cap (docs/engine-load.md, "Bounded
 * reads"); a worker that answers neither is "unknown", not an error: it stays
 * routable.
 */
export async function introspectWorker(
  url: string,
  timeoutMs: number,
  dispatcher?: Dispatcher,
): Promise<Omit<WorkerInfo, 'pushFrom'> & { reachable: boolean; blockSize: number | null }> {
  const get = async (path: string) => getEngineReply(url + path, { timeoutMs, ...(dispatcher ? { dispatcher } : {}) });
  let models: string[] = [];
  let flavor: WorkerInfo['flavor'] = 'unknown';
  let dpSize: number | undefined;
  let nativeScheduling = false;
  let push: WorkerInfo['push'] = null;
  let simulated = false;

  const m = await get('/v1/models');
  // Too large is still an answer: the engine is there.
  if (m.kind === 'error' && m.reason !== 'too_large')
    return { reachable: false, models, flavor, dpSize, nativeScheduling, push, simulated, blockSize: null };
  const info = m.kind === 'ok' ? parseModels(parseJson(m.text)) : null;
  if (info) {
    models = info.ids;
    if (info.engine !== null) flavor = info.engine;
    simulated = info.simulated;
  }
  for (const path of ['/server_info', '/get_server_info']) {
    const r = await get(path);
    if (r.kind === 'error') break;
    const server = r.kind === 'ok' ? parseServerInfo(parseJson(r.text)) : null;
    if (server) {
      dpSize = server.dpSize;
      nativeScheduling = server.cacheAwareSchedule;
      push = server.push;
      simulated ||= server.simulated;
      break;
    }
  }
  // vLLM names its KV event publishers at /kv_event_sources (not before 0.2x: a 404), and
  // says its block size, which its events are keyed at, in /metrics.
  let blockSize: number | null = null;
  if (flavor === 'vllm') {
    if (push === null) {
      const k = await get('/kv_event_sources');
      if (k.kind === 'ok') push = parseKvEventSources(parseJson(k.text));
    }
    const r = await get('/metrics');
    if (r.kind === 'ok') blockSize = vllmBlockSize(r.text);
  }
  return { reachable: true, models, flavor, dpSize, nativeScheduling, push, simulated, blockSize };
}
