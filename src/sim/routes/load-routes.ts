import { sendError, sendJson, sendText } from '../http/responses.js';
import type { EngineLoad } from '../engine-core.js';
import type { SimEngine } from '../sim-engine.js';
import type { RouteHandler } from './route-context.js';

const SECTIONS = ['core', 'memory', 'spec', 'lora', 'disagg', 'queues', 'all'] as const;

/** Apply the load test controls; true when the response was taken care of. */
function loadsDisabled(engine: SimEngine, res: Parameters<RouteHandler>[1]): boolean {
  if (!engine.controls.loadReporting) {
    sendError(res, engine.flavor, true, 404, 'Not Found');
    return true;
  }
  if (engine.controls.loadFault === 'garbage') {
    sendText(res, 200, '{"loads": [{"dp_rank": 0, "num_running_reqs": "lots", ', 'application/json');
    return true;
  }
  if (engine.controls.loadFault === 'hang') {
    res.socket?.setTimeout(0);
    return true; // never answer; the socket closes when the client gives up or the engine stops
  }
  return false;
}

/**
 * One rank's core /v1/loads entry, as SGLang writes it. Exported so that a run on
 * virtual time reads the engines through the same reader as one over HTTP.
 */
export function coreKeys(rank: number, l: EngineLoad, engine: SimEngine): Record<string, unknown> {
  return {
    dp_rank: rank,
    num_running_reqs: l.running,
    num_waiting_reqs: l.waiting,
    // Net of the prefix cache only under lpm; raw lengths under fcfs, as SGLang reports.
    num_waiting_uncached_tokens: l.waitingUncachedTokens,
    num_used_tokens: l.usedTokens,
    num_total_tokens: l.totalTokens,
    max_total_num_tokens: l.maxTotalTokens,
    max_running_requests: engine.params.maxRunning,
    token_usage: round(l.tokenUsage, 4),
    gen_throughput: round(l.genThroughput, 2),
    cache_hit_rate: round(l.cacheHitRate, 4),
    utilization: round(l.running / engine.params.maxRunning, 4),
  };
}

/** GET /v1/loads: one entry per DP rank; `dp_rank`, `include` and `format` as SGLang. */
export const v1Loads: RouteHandler = (_req, res, url, ctx) => {
  const engine = ctx.engine;
  if (loadsDisabled(engine, res)) return;
  const include = (url.searchParams.get('include') ?? 'all')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = include.find((s) => !(SECTIONS as readonly string[]).includes(s));
  if (bad !== undefined) {
    sendError(res, engine.flavor, true, 400, `Invalid include section '${bad}'; valid: ${SECTIONS.join(', ')}`);
    return;
  }
  const rankParam = url.searchParams.get('dp_rank');
  const rankFilter = rankParam === null ? undefined : Number(rankParam);
  if (rankFilter !== undefined && !(Number.isInteger(rankFilter) && rankFilter >= 0 && rankFilter < engine.ranks.length)) {
    sendError(res, engine.flavor, true, 400, `Invalid dp_rank '${rankParam}'`);
    return;
  }
  const all = include.includes('all');
  const loads = engine
    .reportedLoads()
    .map((l, rank) => {
      const entry = coreKeys(rank, l, engine);
      if (all || include.includes('queues')) entry.queues = { waiting: l.waiting, grammar: 0, paused: 0, retracted: 0 };
      if (all || include.includes('memory')) {
        const m = memoryGb(l.maxTotalTokens);
        entry.memory = { weight_gb: m.weight, kv_cache_gb: m.kvCache, graph_gb: m.graph, token_capacity: l.maxTotalTokens };
      }
      return entry;
    })
    .filter((e) => rankFilter === undefined || e.dp_rank === rankFilter);

  if (url.searchParams.get('format') === 'prometheus') {
    let text = '';
    for (const e of loads) {
      for (const [k, v] of Object.entries(e)) {
        if (typeof v === 'number' && k !== 'dp_rank') text += `sglang_${k}{dp_rank="${e.dp_rank}"} ${v}\n`;
      }
    }
    sendText(res, 200, text, 'text/plain; version=0.0.4; charset=utf-8');
    return;
  }
  sendJson(res, 200, {
    timestamp: new Date().toISOString(),
    version: engineVersion(engine),
    // Posing as SGLang, the device an 8B model's engine reports (the step-time fit's H100); else say what it is.
    accelerator: engine.asSglang ? 'NVIDIA H100 80GB HBM3' : 'simulated',
    num_accelerators: 1,
    loads,
  });
};

/** GET /get_load: the current array shape (a deprecated shim over /v1/loads in SGLang). */
export const getLoad: RouteHandler = (_req, res, _url, ctx) => {
  const engine = ctx.engine;
  if (loadsDisabled(engine, res)) return;
  const tic = performance.now() / 1000;
  sendJson(
    res,
    200,
    engine.reportedLoads().map((l, rank) => ({
      dp_rank: rank,
      num_reqs: l.running + l.waiting,
      num_waiting_reqs: l.waiting,
      num_tokens: l.totalTokens,
      num_pending_tokens: l.totalTokens - l.usedTokens,
      ts_tic: tic,
    })),
  );
};

/** vLLM's GET /load: in-flight requests at the API server. */
export const vllmLoad: RouteHandler = (_req, res, _url, ctx) => {
  const engine = ctx.engine;
  if (loadsDisabled(engine, res)) return;
  sendJson(res, 200, { server_load: engine.inflight });
};

export const SIM_VERSION = '0.5.0-sim';
/** What an engine posing as SGLang reports: a release with the LoadStat publisher (docs/simulator.md §Posing as SGLang). */
export const SGLANG_VERSION = '0.5.19';

export function engineVersion(engine: SimEngine): string {
  return engine.asSglang ? SGLANG_VERSION : SIM_VERSION;
}

/** The memory an 8B model's engine reports, in GB: 15 of weights, 128 KiB of KV per token, 0.5 of CUDA graphs. */
export function memoryGb(capacityTokens: number): { weight: number; kvCache: number; graph: number } {
  return { weight: 15.0, kvCache: round((capacityTokens * 131072) / 1e9, 2), graph: 0.5 };
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
