import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { sendError } from '../http/responses.js';
import type { SimRequest } from '../sim-request.js';
import type { GenerationRequest } from './generation-request.js';
import type { RouteContext } from './route-context.js';

/** How one API shapes its output; the engine interaction is the same for all. */
export interface GenerationFormat {
  /** Native SGLang route (error shape differs). */
  native: boolean;
  /** Open the event stream: headers only; no event may precede the first token. */
  onStreamStart(res: ServerResponse, id: string): void;
  onStreamToken(res: ServerResponse, id: string, piece: string, index: number): void;
  onStreamEnd(res: ServerResponse, id: string, request: SimRequest, text: string): void;
  complete(res: ServerResponse, id: string, request: SimRequest, text: string): void;
}

/**
 * Submit to the engine and answer: stream as tokens come, or once at the end. A
 * client that disconnects aborts the request inside the engine, freeing its slot.
 */
export function runGeneration(
  req: IncomingMessage,
  res: ServerResponse,
  gen: GenerationRequest,
  ctx: RouteContext,
  format: GenerationFormat,
  idPrefix: string,
): void {
  const engine = ctx.engine;
  if (gen.model !== undefined && gen.model !== engine.model) {
    sendError(res, engine.flavor, format.native, 404, `The model \`${gen.model}\` does not exist.`);
    return;
  }
  const id = `${idPrefix}${randomBytes(12).toString('hex')}`;
  let text = '';
  let started = false;
  const result = engine.submit(
    { promptTokens: gen.promptTokens, maxTokens: gen.maxTokens, ignoreEos: gen.ignoreEos },
    {
      onToken(piece, index) {
        text += piece;
        if (!gen.stream) return;
        if (!started) {
          started = true;
          format.onStreamStart(res, id);
        }
        format.onStreamToken(res, id, piece, index);
      },
      onFinish(request) {
        if (request.state === 'aborted') {
          if (!res.writableEnded) res.destroy();
          return;
        }
        if (gen.stream) {
          if (!started) format.onStreamStart(res, id);
          format.onStreamEnd(res, id, request, text);
        } else {
          format.complete(res, id, request, text);
        }
      },
    },
    gen.dpRank,
  );
  if (!result.ok) {
    const flavor = engine.flavor;
    switch (result.reason) {
      case 'injected_failure':
        sendError(res, flavor, format.native, 500, 'Internal server error (failure injected by the simulator)');
        return;
      case 'queue_full':
        // vLLM's words and 503 (its QueueOverflowError), even for a stream: it refuses before any SSE.
        if (flavor === 'vllm')
          sendError(
            res,
            flavor,
            format.native,
            503,
            'The engine is currently busy and cannot accept new requests. Please try again later or on a different instance.',
          );
        else sendError(res, flavor, format.native, 429, 'The waiting queue is full; retry later');
        return;
      case 'context_length':
      case 'kv_capacity':
        // The engine's own words for the refusal (src/sim/length-check.ts), in its flavour's error shape.
        sendError(res, flavor, format.native, 400, result.message);
        return;
      case 'bad_rank':
        sendError(res, flavor, format.native, 400, `data_parallel_rank ${gen.dpRank} is out of range`);
        return;
    }
  }
  const request = result.request;
  res.on('close', () => {
    if (!res.writableFinished) engine.abort(request);
  });
  if (gen.stream && gen.maxTokens > 0) {
    // Headers go out at once (as real engines do) so clients see the stream open.
    started = true;
    format.onStreamStart(res, id);
  }
}
