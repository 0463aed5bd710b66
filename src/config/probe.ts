import { Agent, request } from 'undici';
import type { Origin } from './origin.js';
import type { ConfigProblem } from './problem.js';
import { readGetLoad, readMetricsLoad, readV1Loads } from './probe-load.js';
import type { LoadReading } from './probe-load.js';
import { probeWarnings } from './probe-warnings.js';
import type { ConfigKey, RouterConfig } from './schema.js';

export type LoadEndpoint = '/v1/loads' | '/get_load' | '/metrics';

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
  load: (LoadReading & { endpoint: LoadEndpoint }) | null;
  /** From /server_info (or /get_server_info), else the ranks a load reading covered. */
  dpSize: number | null;
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
    const workers = await Promise.all(urls.map((url) => probeOne(url, agent, timeoutMs)));
    return { workers, warnings: probeWarnings(workers, config, options.origins ?? {}) };
  } finally {
    await agent.destroy();
  }
}

type Answer = { ok: true; status: number; text: string } | { ok: false; error: string };

async function probeOne(rawUrl: string, agent: Agent, timeoutMs: number): Promise<WorkerProbe> {
  const url = rawUrl.replace(/\/+$/, '');
  const fact: WorkerProbe = { url, reachable: false, error: null, models: null, engine: null, load: null, dpSize: null };
  try {
    new URL(url);
  } catch {
    return { ...fact, error: 'not a valid URL' };
  }
  const signal = AbortSignal.timeout(timeoutMs);
  const answers: Answer[] = [];
  const get = async (path: string): Promise<Answer> => {
    let answer: Answer;
    try {
      const res = await request(url + path, { dispatcher: agent, signal, headers: { accept: 'application/json, text/plain' } });
      answer = { ok: true, status: res.statusCode, text: await res.body.text() };
    } catch (err) {
      answer = { ok: false, error: describeFailure(err, timeoutMs) };
    }
    answers.push(answer);
    return answer;
  };

  const [models, dpSize, load] = await Promise.all([readModels(get), readDpSize(get), readLoad(get)]);
  const reachable = answers.some((a) => a.ok);
  const firstError = answers.find((a): a is { ok: false; error: string } => !a.ok);
  return {
    url,
    reachable,
    error: reachable ? null : (firstError?.error ?? 'no answer'),
    models: models?.ids ?? null,
    engine: models?.engine ?? null,
    load,
    dpSize: dpSize ?? (load?.ranks !== null && load?.ranks !== undefined && load.ranks > 0 ? load.ranks : null),
  };
}

type Get = (path: string) => Promise<Answer>;

async function readModels(get: Get): Promise<{ ids: string[]; engine: WorkerProbe['engine'] } | null> {
  const body = json(await get('/v1/models'));
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  const ids = data.map((m) => (m as { id?: unknown }).id).filter((id): id is string => typeof id === 'string');
  const owner = data.map((m) => (m as { owned_by?: unknown }).owned_by).find((o) => o === 'sglang' || o === 'vllm');
  return { ids, engine: owner === 'sglang' || owner === 'vllm' ? owner : null };
}

async function readDpSize(get: Get): Promise<number | null> {
  for (const path of ['/server_info', '/get_server_info']) {
    const answer = await get(path);
    if (!answer.ok) return null;
    const dp = (json(answer) as { dp_size?: unknown } | null)?.dp_size;
    if (typeof dp === 'number' && Number.isInteger(dp) && dp > 0) return dp;
  }
  return null;
}

/** The router sampler's order (DESIGN §3): /v1/loads, /get_load in any shape, /metrics. */
async function readLoad(get: Get): Promise<WorkerProbe['load']> {
  const v1 = await get('/v1/loads');
  if (!v1.ok) return null;
  const fromV1 = readV1Loads(json(v1));
  if (fromV1) return { endpoint: '/v1/loads', ...fromV1 };
  const fromGetLoad = readGetLoad(json(await get('/get_load')));
  if (fromGetLoad) return { endpoint: '/get_load', ...fromGetLoad };
  const metrics = await get('/metrics');
  if (metrics.ok && metrics.status >= 200 && metrics.status < 300) {
    const fromMetrics = readMetricsLoad(metrics.text);
    if (fromMetrics) return { endpoint: '/metrics', ...fromMetrics };
  }
  return null;
}

function json(answer: Answer): unknown {
  if (!answer.ok || answer.status < 200 || answer.status >= 300) return null;
  try {
    return JSON.parse(answer.text) as unknown;
  } catch {
    return null;
  }
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_CONNECT_TIMEOUT' || e.code === 'UND_ERR_HEADERS_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : String(err);
  return message.split('\n')[0]!;
}
