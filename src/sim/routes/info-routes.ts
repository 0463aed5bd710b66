import { sendError, sendJson, sendText } from '../http/responses.js';
import type { RouteHandler } from './route-context.js';
import { engineVersion, memoryGb } from './load-routes.js';

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
        // The simulator's one marker (docs/simulator.md §Push channels), in no engine's card: tells
        // routerctl's router it talks to the simulator (vLLM has no /server_info to say so). Not when posing as SGLang.
        ...(e.asSglang ? {} : { simulated: true }),
      },
    ],
  });
};

/** vLLM's GET /kv_event_sources: where each rank publishes its KV events, `{}` when it does not (docs/engine-push.md §Discovery). */
export const kvEventSources: RouteHandler = (_req, res, _url, ctx) => {
  sendJson(res, 200, ctx.engine.push?.kvEventSources() ?? {});
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

/**
 * GET /server_info and /get_server_info: SGLang's `dataclasses.asdict(server_args)`
 * (the arguments a router reads), the scheduler's `max_total_num_tokens`, the
 * `kv_events` descriptor, `internal_states` (one per DP rank) and `version`; nothing
 * SGLang does not write (docs/simulator.md §Push channels).
 */
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
    kv_events_config: e.push?.kvEventsConfig() ?? null,
    load_publish_endpoint: e.push?.loadPublishEndpoint() ?? null,
    kv_events: e.push?.serverInfoBlock() ?? null,
    // The scheduler's get_internal_state: its throughput and memory (the server arguments it also repeats are left out).
    internal_states: e.reportedLoads().map((l) => {
      const m = memoryGb(l.maxTotalTokens);
      return {
        last_gen_throughput: Math.round(l.genThroughput * 100) / 100,
        memory_usage: { weight: m.weight, kvcache: m.kvCache, token_capacity: l.maxTotalTokens, cuda_graph: m.graph },
      };
    }),
    version: engineVersion(e),
  });
};

export const flushCache: RouteHandler = (_req, res, _url, ctx) => {
  if (ctx.engine.flushCache()) {
    sendText(
      res,
      200,
      'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n',
    );
  } else {
    sendText(res, 400, 'Cache not flushed: there are running or waiting requests.\n');
  }
};
