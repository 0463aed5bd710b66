import { sendJson, startSse, writeSse } from '../http/responses.js';
import type { SimRequest } from '../sim-request.js';
import { parseGenerateRequest } from './generation-request.js';
import type { RouteHandler } from './route-context.js';
import { readJson } from './read-json.js';
import { runGeneration } from './run-generation.js';

/** SGLang's default max_new_tokens for /generate. */
const DEFAULT_MAX_NEW_TOKENS = 128;
/** The token id reported as the matched stop token (an EOS id). */
const EOS_TOKEN_ID = 2;

function metaInfo(id: string, r: SimRequest | undefined, completion: number, finished: boolean): Record<string, unknown> {
  let finish: unknown = null;
  if (finished && r) {
    finish = r.finishReason === 'length' ? { type: 'length', length: r.completionTokens } : { type: 'stop', matched: EOS_TOKEN_ID };
  }
  return {
    id,
    finish_reason: finish,
    prompt_tokens: r?.promptTokens ?? 0,
    completion_tokens: completion,
    cached_tokens: r?.cachedTokens ?? 0,
    e2e_latency: r && finished ? (r.finishedAt - r.arrivalAt) / 1000 : 0,
  };
}

/**
 * POST|PUT /generate. Streaming events carry the cumulative text so far (SGLang's
 * default, incremental_streaming_output off), and the last one a finish_reason.
 */
export const generate: RouteHandler = async (req, res, _url, ctx) => {
  const body = await readJson(req, res, ctx, true);
  if (!body) return;
  const gen = parseGenerateRequest(body, DEFAULT_MAX_NEW_TOKENS, ctx.engine.tokenizer);
  let cumulative = '';
  let count = 0;
  runGeneration(
    req,
    res,
    gen,
    ctx,
    {
      native: true,
      onStreamStart(r) {
        startSse(r);
      },
      onStreamToken(r, id, piece) {
        cumulative += piece;
        count++;
        writeSse(r, { text: cumulative, meta_info: metaInfo(id, undefined, count, false) });
      },
      onStreamEnd(r, id, request, text) {
        writeSse(r, { text, output_ids: request.output, meta_info: metaInfo(id, request, request.completionTokens, true) });
        writeSse(r, '[DONE]');
        r.end();
      },
      complete(r, id, request, text) {
        sendJson(r, 200, { text, output_ids: request.output, meta_info: metaInfo(id, request, request.completionTokens, true) });
      },
    },
    '',
  );
};
