import { readBody } from '../http/read-body.js';
import { sendJson } from '../http/responses.js';
import { parseJsonObject, RequestValidationError } from './generation-request.js';
import type { RouteHandler } from './route-context.js';

const CONTROL_BODY_LIMIT = 64 * 1024;

/** PUT /sim/load {"num_waiting_reqs": N | null}: pin the reported waiting count. */
export const putSimLoad: RouteHandler = async (req, res, _url, ctx) => {
  const body = parseJsonObject(await readBody(req, CONTROL_BODY_LIMIT));
  if (!('num_waiting_reqs' in body)) throw new RequestValidationError(400, 'expected {"num_waiting_reqs": N | null}');
  const v = body.num_waiting_reqs;
  if (v !== null && !(Number.isInteger(v) && (v as number) >= 0)) {
    throw new RequestValidationError(400, 'num_waiting_reqs must be a non-negative integer or null');
  }
  ctx.engine.controls.pinnedWaiting = v as number | null;
  sendJson(res, 200, controlsView(ctx));
};

/** PUT /sim/config {"load_reporting": bool, "failure_rate": 0..1, "load_fault": "garbage" | "hang" | null}. */
export const putSimConfig: RouteHandler = async (req, res, _url, ctx) => {
  const body = parseJsonObject(await readBody(req, CONTROL_BODY_LIMIT));
  const c = ctx.engine.controls;
  for (const key of Object.keys(body)) {
    if (key !== 'load_reporting' && key !== 'failure_rate' && key !== 'load_fault') {
      throw new RequestValidationError(400, `unknown key '${key}'; expected load_reporting, failure_rate or load_fault`);
    }
  }
  if ('load_reporting' in body) {
    if (typeof body.load_reporting !== 'boolean') throw new RequestValidationError(400, 'load_reporting must be a boolean');
  }
  if ('failure_rate' in body) {
    const f = body.failure_rate;
    if (typeof f !== 'number' || !(f >= 0 && f <= 1)) throw new RequestValidationError(400, 'failure_rate must be a number in [0, 1]');
  }
  if ('load_fault' in body && body.load_fault !== null && body.load_fault !== 'garbage' && body.load_fault !== 'hang') {
    throw new RequestValidationError(400, 'load_fault must be "garbage", "hang" or null');
  }
  if (typeof body.load_reporting === 'boolean') c.loadReporting = body.load_reporting;
  if ('load_fault' in body) c.loadFault = body.load_fault as 'garbage' | 'hang' | null;
  if (typeof body.failure_rate === 'number') c.failureRate = body.failure_rate;
  sendJson(res, 200, controlsView(ctx));
};

/**
 * PUT /sim/push {"kv_events": "live" | "paused", "load": "live" | "paused", "restart": true}:
 * pause a push channel, or act out an engine restart. Paused KV batches are still
 * numbered and kept for replay, so resuming shows subscribers a gap that replay
 * repairs; a paused load channel goes silent; a restart empties the KV cache without
 * an event and starts every sequence again at 0.
 */
export const putSimPush: RouteHandler = async (req, res, _url, ctx) => {
  const body = parseJsonObject(await readBody(req, CONTROL_BODY_LIMIT));
  const push = ctx.engine.push;
  if (!push) throw new RequestValidationError(409, 'this engine publishes nothing: start it with --kv-events or --load-publish');
  for (const [key, v] of Object.entries(body)) {
    if (key === 'restart') {
      if (v !== true) throw new RequestValidationError(400, 'restart must be true');
      continue;
    }
    if (key !== 'kv_events' && key !== 'load')
      throw new RequestValidationError(400, `unknown key '${key}'; expected kv_events, load or restart`);
    if (v !== 'live' && v !== 'paused') throw new RequestValidationError(400, `${key} must be "live" or "paused"`);
  }
  if (body.restart === true && !push.restart())
    throw new RequestValidationError(409, 'requests are inside the engine; restart it when idle');
  if (body.kv_events !== undefined) push.paused.kv = body.kv_events === 'paused';
  if (body.load !== undefined) push.paused.load = body.load === 'paused';
  sendJson(res, 200, { kv_events: push.paused.kv ? 'paused' : 'live', load: push.paused.load ? 'paused' : 'live', dropped: push.dropped });
};

export const getSimConfig: RouteHandler = (_req, res, _url, ctx) => sendJson(res, 200, controlsView(ctx));

function controlsView(ctx: Parameters<RouteHandler>[3]): Record<string, unknown> {
  const c = ctx.engine.controls;
  return { load_reporting: c.loadReporting, failure_rate: c.failureRate, load_fault: c.loadFault, num_waiting_reqs: c.pinnedWaiting };
}
