import { Agent } from 'undici';
import { decodeLoadStat, getEngineReply, kvEventsRuleFor, parseJson, parseModels, parseServerInfo, PushSubscription, pushEndpoint, pushInfoFromRule, vllmBlockSize } from '../engines/index.js';
import type { EngineReply, KvEventsRule, PushInfo } from '../engines/index.js';
import type { Origin } from './origin.js';
import type { ConfigProblem } from './problem.js';
import { probeLoad } from './probe-load.js';
import type { LoadEndpoint, LoadReading } from './probe-load.js';
import { probeWarnings } from './probe-warnings.js';
import type { ConfigKey, RouterConfig } from './schema.js';

export type { LoadEndpoint };

/** What `check-config --probe` learnt about one worker. */
export interface WorkerProbe {
  url: string;
  /** Answered at least one request with an HTTP status. */
  reachable: boolean;
  /** Why it is unreachable, one line; null when reachable. */
  error: string | null;
  /** Model ids from /v1/models; null when that endpoint failed. */
  models: string[] | null;
  /** From /v1/models `owned_by`, the reliable way to tell the two apart. */
  engine: 'sglang' | 'vllm' | null;
  /** The first load endpoint that answered usefully, in the router sampler's order; null = no load reported. */
  load: LoadReading | null;
  /** From /server_info (or /get_server_info), else the ranks a load reading covered. */
  dpSize: number | null;
  /** SGLang --schedule-policy from /server_info, when it says. */
  schedulePolicy: string | null;
  /** The engine's push channels from /server_info (docs/engine-push.md §Discovery); null when it advertises none. */
  push: PushProbe | null;
}

/** What the probe learnt of a worker's push channels. */
export interface PushProbe {
  /** KV events are published: the router could build its prefix index from them. */
  kvEvents: boolean;
  /** Tokens per block the events hash; null when the engine does not say. */
  blockSize: number | null;
  /**
   * The load channel: `live` when a LoadStat arrived from every rank within the probe's
   * budget (the router would take load by push), `silent` when advertised but nothing
   * came (a firewall, a wrong host: the router would poll), null when not advertised.
   */
  load: 'live' | 'silent' | null;
  endpoints: { kvEvents: string[]; load: string[] };
  /** `engine`: advertised in /server_info; `config`: from a --kv-events entry (which wins). */
  from: 'engine' | 'config';
}

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
    return { workers, warnings: probeWarnings(workers, config, options.origins ?? {}) };
  } finally {
    await agent.destroy();
  }
}

async function probeOne(rawUrl: string, agent: Agent, timeoutMs: number, rules: readonly KvEventsRule[]): Promise<WorkerProbe> {
  const url = rawUrl.replace(/\/+$/, '');
  const fact: WorkerProbe = { url, reachable: false, error: null, models: null, engine: null, load: null, dpSize: null, schedulePolicy: null, push: null };
  try {
    new URL(url);
  } catch {
    return { ...fact, error: 'not a valid URL' };
  }
  const signal = AbortSignal.timeout(timeoutMs);
  const answers: EngineReply[] = [];
  const get = async (path: string): Promise<EngineReply> => {
    const reply = await getEngineReply(url + path, { dispatcher: agent, signal, timeoutMs, headers: { accept: 'application/json, text/plain' } });
    answers.push(reply);
    return reply;
  };

  const started = performance.now();
  const [models, server, load] = await Promise.all([readModels(get), readServerInfo(get), probeLoad(get)]);
  // A --kv-events entry wins over what the engine advertises, as in the router.
  const rule = kvEventsRuleFor(rules, url);
  const info = rule ? pushInfoFromRule(rule) : server?.push;
  let push = info ? await probePush(url, info, Math.max(0, timeoutMs - (performance.now() - started)), rule ? 'config' : 'engine') : null;
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
    push,
  };
}

/**
 * The advertised channels, and whether load actually arrives: a LoadStat from every
 * rank within what is left of the worker's budget (an engine heartbeats every second,
 * so a live channel answers within the probe's 2 s).
 */
async function probePush(url: string, info: PushInfo, budgetMs: number, from: PushProbe['from']): Promise<PushProbe> {
  const ranks = Array.from({ length: info.dpSize }, (_, r) => r);
  const endpoints = {
    kvEvents: ranks.map((r) => pushEndpoint(url, info, info.kvPortBase, r)),
    load: info.loadPortBase === null ? [] : ranks.map((r) => pushEndpoint(url, info, info.loadPortBase!, r)),
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
  return { kvEvents: true, blockSize: info.blockSize, load, endpoints, from };
}

type Get = (path: string) => Promise<EngineReply>;

async function readModels(get: Get) {
  const reply = await get('/v1/models');
  return reply.kind === 'ok' ? parseModels(parseJson(reply.text)) : null;
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
