import { Agent } from 'undici';
import {
  decodeLoadStat,
  getEngineReply,
  kvEventsEndpoint,
  kvEventsRuleFor,
  mergePushInfo,
  parseJson,
  parseKvEventSources,
  parseModels,
  parseServerInfo,
  PushSubscription,
  pushEndpoint,
  replayEndpoints,
  vllmBlockSize,
} from '../engines/index.js';
import type { EngineReply, KvEventsRule, PushInfo } from '../engines/index.js';
import { engineBlockKeys } from '../prefix/index.js';
import type { EngineHashScheme } from '../prefix/index.js';
import type { Origin } from './origin.js';
import type { ConfigProblem } from './problem.js';
import { probeLoad } from './probe-load.js';
import type { LoadEndpoint } from './probe-load.js';
import { probeWarnings } from './probe-warnings.js';
import type { KeyingCost, PushProbe, WorkerProbe } from './worker-probe.js';
import type { ConfigKey, RouterConfig } from './schema.js';

export type { LoadEndpoint };
export type { KeyingCost, PushProbe, WorkerProbe };

export interface ProbeReport {
  workers: WorkerProbe[];
  warnings: ConfigProblem[];
}

export interface ProbeOptions {
  /** Budget per worker, all its requests included. Default 2000 ms. */
  timeoutMs?: number;
  /** Lets warnings say where the limit or the URLs were set. */
  origins?: Partial<Record<ConfigKey, Origin>>;
}

/**
 * Contact every worker in parallel, each within its own time budget, and predict
 * what would go wrong at serve time: unreachable workers, workers that publish no
 * load (the queue gate would admit them blindly), DP sizes the limit must scale with,
 * models that do not match. Never throws for a worker's failure; every failure is a
 * fact in the report.
 */
export async function probeWorkers(urls: readonly string[], config: RouterConfig, options: ProbeOptions = {}): Promise<ProbeReport> {
  const timeoutMs = options.timeoutMs ?? 2000;
  // Own connection pool, destroyed at the end: keep-alive sockets in the global one
  // would hold a short-lived CLI open for seconds after it has printed its answer.
  const agent = new Agent({ connect: { timeout: timeoutMs } });
  try {
    const workers = await Promise.all(urls.map((url) => probeOne(url, agent, timeoutMs, config.kvEvents)));
    measureKeying(workers);
    return { workers, warnings: probeWarnings(workers, config, options.origins ?? {}) };
  } finally {
    await agent.destroy();
  }
}

async function probeOne(rawUrl: string, agent: Agent, timeoutMs: number, rules: readonly KvEventsRule[]): Promise<WorkerProbe> {
  const url = rawUrl.replace(/\/+$/, '');
  const fact: WorkerProbe = {
    url,
    reachable: false,
    error: null,
    models: null,
    engine: null,
    load: null,
    dpSize: null,
    schedulePolicy: null,
    simulated: false,
    push: null,
  };
  try {
    new URL(url);
  } catch {
    return { ...fact, error: 'not a valid URL' };
  }
  const signal = AbortSignal.timeout(timeoutMs);
  const answers: EngineReply[] = [];
  const get = async (path: string): Promise<EngineReply> => {
    const reply = await getEngineReply(url + path, {
      dispatcher: agent,
      signal,
      timeoutMs,
      headers: { accept: 'application/json, text/plain' },
    });
    answers.push(reply);
    return reply;
  };

  const started = performance.now();
  const [models, server, load] = await Promise.all([readModels(get), readServerInfo(get), probeLoad(get)]);
  // vLLM names its publishers at /kv_event_sources, as the router reads them (introspectWorker).
  const vllmSources = models?.engine === 'vllm' && !server?.push ? await readKvEventSources(get) : null;
  // A --kv-events entry wins over what the engine advertises, or adds its replay endpoint, as in the router.
  const { push: info, pushFrom } = mergePushInfo(server?.push ?? vllmSources, kvEventsRuleFor(rules, url));
  const simulated = (models?.simulated ?? false) || (server?.simulated ?? false);
  // The router's choice (src/router/router.ts eventsVerdict): an unknown engine named by --kv-events is taken for vLLM.
  const vllm = (models?.engine ?? (pushFrom === 'config' ? 'vllm' : 'sglang')) === 'vllm';
  const scheme: EngineHashScheme = vllm ? 'tokens' : simulated ? 'sim' : 'sglang';
  let push = info
    ? await probePush(
        url,
        info,
        Math.max(0, timeoutMs - (performance.now() - started)),
        pushFrom === 'config' ? 'config' : 'engine',
        scheme,
      )
    : null;
  // vLLM's events carry their block size, but it says so ahead of time only in /metrics.
  if (push && push.blockSize === null && models?.engine === 'vllm') {
    const metrics = await get('/metrics');
    if (metrics.kind === 'ok') push = { ...push, blockSize: vllmBlockSize(metrics.text) };
  }
  // An oversized reply is still an answer.
  const reachable = answers.some((a) => a.kind !== 'error' || a.reason === 'too_large');
  const firstError = answers.find((a): a is Extract<EngineReply, { kind: 'error' }> => a.kind === 'error');
  return {
    url,
    reachable,
    error: reachable ? null : (firstError?.detail ?? 'no answer'),
    models: models?.ids ?? null,
    engine: models?.engine ?? null,
    load,
    dpSize: server?.dpSize ?? (load?.ranks !== null && load?.ranks !== undefined && load.ranks > 0 ? load.ranks : null),
    schedulePolicy: server?.schedulePolicy ?? null,
    simulated,
    push,
  };
}

/** Tokens in the prompt whose keying the probe times: a long document or agent context. */
const KEYING_PROBE_TOKENS = 100_000;

/**
 * Time keying a 100K-token prompt for every distinct (scheme, block size) among the
 * workers, once each, on fresh random tokens (SGLang's chain would otherwise resume
 * from checkpoints a previous prompt left), and attach the figure to each worker's
 * push facts. A shorter run first, so that the one timed is not the code's first
 * (cold, it costs several times as much).
 */
function measureKeying(workers: WorkerProbe[]): void {
  const measured = new Map<string, KeyingCost>();
  for (const w of workers) {
    const push = w.push;
    if (push === null || push.blockSize === null) continue;
    const key = `${push.scheme}/${push.blockSize}`;
    let cost = measured.get(key);
    if (cost === undefined) {
      engineBlockKeys(randomTokens(KEYING_PROBE_TOKENS / 8), push.blockSize, push.scheme);
      const tokens = randomTokens(KEYING_PROBE_TOKENS);
      const started = performance.now();
      engineBlockKeys(tokens, push.blockSize, push.scheme);
      cost = {
        scheme: push.scheme,
        blockSize: push.blockSize,
        tokens: KEYING_PROBE_TOKENS,
        ms: Math.round((performance.now() - started) * 1000) / 1000,
      };
      measured.set(key, cost);
    }
    push.keying = cost;
  }
}

function randomTokens(n: number): Int32Array {
  const tokens = new Int32Array(n);
  for (let i = 0; i < n; i++) tokens[i] = Math.floor(Math.random() * 150_000);
  return tokens;
}

/**
 * The advertised channels, and whether load actually arrives: a LoadStat from every
 * rank within what is left of the worker's budget (an engine heartbeats every second,
 * so a live channel answers within the probe's 2 s).
 */
async function probePush(
  url: string,
  info: PushInfo,
  budgetMs: number,
  from: PushProbe['from'],
  scheme: EngineHashScheme,
): Promise<PushProbe> {
  const ranks = Array.from({ length: info.dpSize }, (_, r) => r);
  const endpoints = {
    kvEvents: ranks.map((r) => kvEventsEndpoint(url, info, r)),
    load: info.loadPortBase === null ? [] : ranks.map((r) => pushEndpoint(url, info, info.loadPortBase!, r)),
    replay: replayEndpoints(url, info),
  };
  let load: PushProbe['load'] = null;
  if (endpoints.load.length > 0) {
    const heard = new Set<number>();
    const subs: PushSubscription[] = [];
    load = await new Promise<'live' | 'silent'>((resolve) => {
      const timer = setTimeout(() => resolve('silent'), budgetMs);
      endpoints.load.forEach((endpoint, rank) =>
        subs.push(
          new PushSubscription(endpoint, info.loadTopic, (frame) => {
            try {
              decodeLoadStat(frame.payload);
            } catch {
              return; // not a LoadStat: not heard
            }
            heard.add(rank);
            if (heard.size === ranks.length) {
              clearTimeout(timer);
              resolve('live');
            }
          }),
        ),
      );
    });
    for (const s of subs) s.close();
  }
  return {
    kvEvents: true,
    blockSize: info.blockSize,
    load,
    bind: info.kvBind === true,
    endpoints,
    from,
    replayFrom: info.replayFrom,
    scheme,
    keying: null,
  };
}

type Get = (path: string) => Promise<EngineReply>;

async function readModels(get: Get) {
  const reply = await get('/v1/models');
  return reply.kind === 'ok' ? parseModels(parseJson(reply.text)) : null;
}

async function readKvEventSources(get: Get) {
  const reply = await get('/kv_event_sources');
  return reply.kind === 'ok' ? parseKvEventSources(parseJson(reply.text)) : null;
}

async function readServerInfo(get: Get) {
  for (const path of ['/server_info', '/get_server_info']) {
    const reply = await get(path);
    if (reply.kind === 'error') return null;
    const info = reply.kind === 'ok' ? parseServerInfo(parseJson(reply.text)) : null;
    if (info) return info;
  }
  return null;
}
