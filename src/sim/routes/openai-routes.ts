import type { ServerResponse } from 'node:http';
import { sendJson, startSse, writeSse } from '../http/responses.js';
import type { SimRequest } from '../sim-request.js';
import { parseChatRequest, parseCompletionRequest } from './generation-request.js';
import type { RouteHandler } from './route-context.js';
import { readJson } from './read-json.js';
import { runGeneration } from './run-generation.js';
import type { GenerationFormat } from './run-generation.js';

const DEFAULT_MAX_TOKENS = 256;

function usage(r: SimRequest): Record<string, unknown> {
  return {
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    total_tokens: r.promptTokens + r.completionTokens,
    prompt_tokens_details: { cached_tokens: r.cachedTokens },
  };
}

const created = (): number => Math.floor(Date.now() / 1000);

function chatFormat(model: string, includeUsage: boolean): GenerationFormat {
  const chunk = (id: string, delta: Record<string, unknown>, finish: string | null): Record<string, unknown> => ({
    id,
    object: 'chat.completion.chunk',
    created: created(),
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  // Engines send the role delta when the first token comes out, not when the request
  // is accepted: a client timing the first chunk must measure time to first token.
  let roleSent = false;
  const sendRole = (res: ServerResponse, id: string): void => {
    roleSent = true;
    writeSse(res, chunk(id, { role: 'assistant', content: '' }, null));
  };
  return {
    native: false,
    onStreamStart(res: ServerResponse) {
      startSse(res);
    },
    onStreamToken(res, id, piece) {
      if (!roleSent) sendRole(res, id);
      writeSse(res, chunk(id, { content: piece }, null));
    },
    onStreamEnd(res, id, r) {
      if (!roleSent) sendRole(res, id);
      writeSse(res, chunk(id, {}, r.finishReason ?? 'stop'));
      if (includeUsage) {
        writeSse(res, { id, object: 'chat.completion.chunk', created: created(), model, choices: [], usage: usage(r) });
      }
      writeSse(res, '[DONE]');
      res.end();
    },
    complete(res, id, r, text) {
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created: created(),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: r.finishReason ?? 'stop' }],
        usage: usage(r),
      });
    },
  };
}

function completionFormat(model: string, includeUsage: boolean): GenerationFormat {
  const chunk = (id: string, text: string, finish: string | null): Record<string, unknown> => ({
    id,
    object: 'text_completion',
    created: created(),
    model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
  });
  return {
    native: false,
    onStreamStart(res) {
      startSse(res);
    },
    onStreamToken(res, id, piece) {
      writeSse(res, chunk(id, piece, null));
    },
    onStreamEnd(res, id, r) {
      writeSse(res, chunk(id, '', r.finishReason ?? 'stop'));
      if (includeUsage) writeSse(res, { id, object: 'text_completion', created: created(), model, choices: [], usage: usage(r) });
      writeSse(res, '[DONE]');
      res.end();
    },
    complete(res, id, r, text) {
      sendJson(res, 200, {
        id,
        object: 'text_completion',
        created: created(),
        model,
        choices: [{ index: 0, text, logprobs: null, finish_reason: r.finishReason ?? 'stop' }],
        usage: usage(r),
      });
    },
  };
}

export const chatCompletions: RouteHandler = async (req, res, _url, ctx) => {
  const body = await readJson(req, res, ctx, false);
  if (!body) return;
  const gen = parseChatRequest(body, DEFAULT_MAX_TOKENS, ctx.engine.tokenizer);
  runGeneration(req, res, gen, ctx, chatFormat(ctx.engine.model, gen.includeUsage), 'chatcmpl-');
};

export const completions: RouteHandler = async (req, res, _url, ctx) => {
  const body = await readJson(req, res, ctx, false);
  if (!body) return;
  const gen = parseCompletionRequest(body, DEFAULT_MAX_TOKENS, ctx.engine.tokenizer);
  runGeneration(req, res, gen, ctx, completionFormat(ctx.engine.model, gen.includeUsage), 'cmpl-');
};
