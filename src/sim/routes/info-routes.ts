import { sendError, sendJson, sendText } from '../http/responses.js';
import type { RouteHandler } from './route-context.js';
import { SIM_VERSION } from './load-routes.js';

export const models: RouteHandler = (_req, res, _url, ctx) => {
  const e = ctx.engine;
  sendJson(res, 200, {
    object: 'list',
    data: [
      {
        id: e.model,
        object: 'model',
        created: Math.floor(e.startedAt / 1000),
        owned_by: e.flavor,
        root: e.model,
        max_model_len: e.params.maxModelLen,
        // Not in either engine's card: tells routerctl's router it talks to the simulator (vLLM has no /server_info to say so).
        simulated: true,
      },
    ],
  });
};

export const health: RouteHandler = (_req, res) => {
  res.writeHead(200, { 'content-length': 0 });
  res.end();
};

/** SGLang runs a one-token generation; 200 once a token comes out. */
export const healthGenerate: RouteHandler = (_req, res, _url, ctx) => {
  const result = ctx.engine.submit(
    { promptTokens: [0], maxTokens: 1, ignoreEos: true },
    {
      onToken() {},
      onFinish(r) {
        if (r.state === 'finished') health(_req, res, _url, ctx);
        else sendError(res, ctx.engine.flavor, true, 503, 'health generation aborted');
      },
    },
  );
  if (!result.ok) sendError(res, ctx.engine.flavor, true, 503, `health generation refused: ${result.reason}`);
};

export const serverInfo: RouteHandler = (_req, res, _url, ctx) => {
  const e = ctx.engine;
  const p = e.params;
  sendJson(res, 200, {
    model_path: e.model,
    served_model_name: e.model,
    dp_size: e.ranks.length,
    tp_size: 1,
    page_size: p.blockSize,
    max_running_requests: p.maxRunning,
    max_total_tokens: e.maxTotalTokensFlag,
    max_total_num_tokens: p.kvBlocks * p.blockSize,
    chunked_prefill_size: p.chunkedPrefillSize,
    max_prefill_tokens: p.maxPrefillTokens,
    schedule_policy: p.schedulePolicy,
    radix_eviction_policy: 'lru',
    load_balance_method: 'round_robin',
    stream_interval: 1,
    incremental_streaming_output: false,
    kv_events: e.push?.serverInfoBlock() ?? null,
    internal_states: e.ranks.map((r) => ({ dp_rank: r.rank, load: r.runningCount + r.waitingCount })),
    version: SIM_VERSION,
    simulated: true,
  });
};

export const flushCache: RouteHandler = (_req, res, _url, ctx) => {
  if (ctx.engine.flushCache()) {
    sendText(res, 200, 'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n');
  } else {
    sendText(res, 400, 'Cache not flushed: there are running or waiting requests.\n');
  }
};
