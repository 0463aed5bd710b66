import type { ChatMessage } from '../../prefix/index.js';
import type { BodyChunks } from '../../net/index.js';
import { StringDecoder } from 'node:string_decoder';
import { ApiErrors } from '../api-error/api-error.js';
import { SCAN_MIN_BYTES, scanInferenceRequest } from './json-body-scanner.js';
import { keyPrompt } from './request-keying.js';
import type { Prompt, PromptKey, RequestKeying } from './request-keying.js';
import type { InferenceRoute } from './inference-route.js';

export type { InferenceRoute };

/** What the router needs from a generation request; the body itself is forwarded untouched. */
export interface InferenceRequest extends PromptKey {
  route: InferenceRoute;
  model: string | undefined;
  stream: boolean;
  /**
   * Where the prefix index found each block at selection, so that recording the
   * serving worker afterwards skips the table lookups (PrefixIndex.record).
   */
  prefixHints?: Int32Array;
  /**
   * The prefix index's answer at the booked selection, which workers hold how much: the
   * relay's predicted prefill. Spelled out, as `policies` (PrefixSignal) is no lower room.
   */
  prefixSignal?:
    { readonly queryBlocks: number; readonly matches: ReadonlyArray<{ readonly worker: object; readonly blocks: number }> } | undefined;
}

/**
 * Parse and check a generation body, and key its prompt as `keying` says
 * (request-keying.ts). A long body is read in place by the body scanner, whatever the
 * keying; JSON.parse is the reference, and has the last word whenever the scanner
 * declines.
 */
export function parseInferenceRequest(route: InferenceRoute, body: Buffer | BodyChunks, keying: RequestKeying): InferenceRequest {
  if (body.length >= SCAN_MIN_BYTES) {
    const scanned = scanInferenceRequest(route, body, keying);
    if (scanned) return { route, ...scanned };
  }
  return parseWithJsonParse(route, body, keying);
}

/** parseInferenceRequest through JSON.parse: the reference the body scanner is held to, and its fallback. */
export function parseWithJsonParse(route: InferenceRoute, body: Buffer | BodyChunks, keying: RequestKeying): InferenceRequest {
  const { model, stream, prompt } = parsePrompt(route, body);
  return { route, model, stream, ...keyPrompt(prompt, keying) };
}

/** The body checked and its prompt taken out, through JSON.parse; every refusal is a 400. */
function parsePrompt(route: InferenceRoute, body: Buffer | BodyChunks): { model: string | undefined; stream: boolean; prompt: Prompt } {
  let json: unknown;
  try {
    json = JSON.parse(bodyText(body));
  } catch (err) {
    throw ApiErrors.badRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw ApiErrors.badRequest('request body must be a JSON object');
  const o = json as Record<string, unknown>;
  if (o.model !== undefined && typeof o.model !== 'string') throw ApiErrors.badRequest("'model' must be a string");
  if (o.stream !== undefined && o.stream !== null && typeof o.stream !== 'boolean')
    throw ApiErrors.badRequest("'stream' must be a boolean");
  const model = o.model as string | undefined;
  const stream = o.stream === true;

  if (route === 'chat') {
    if (!Array.isArray(o.messages) || o.messages.length === 0) throw ApiErrors.badRequest("'messages' must be a non-empty array");
    for (const [i, m] of o.messages.entries()) {
      if (!m || typeof m !== 'object' || typeof (m as { role?: unknown }).role !== 'string') {
        throw ApiErrors.badRequest(`messages[${i}] must be an object with a string 'role'`);
      }
    }
    return { model, stream, prompt: { kind: 'chat', messages: o.messages as ChatMessage[] } };
  }
  if (route === 'completions') {
    if (typeof o.prompt === 'string') return { model, stream, prompt: { kind: 'texts', texts: [o.prompt] } };
    if (isTokenIds(o.prompt)) return { model, stream, prompt: { kind: 'ids', ids: o.prompt } };
    if (Array.isArray(o.prompt) && typeof o.prompt[0] === 'string')
      return { model, stream, prompt: { kind: 'texts', texts: o.prompt as string[] } };
    throw ApiErrors.badRequest("'prompt' must be a string, an array of strings, or an array of token ids");
  }
  if (typeof o.text === 'string') return { model, stream, prompt: { kind: 'texts', texts: [o.text] } };
  if (isTokenIds(o.input_ids)) return { model, stream, prompt: { kind: 'ids', ids: o.input_ids } };
  // A batch: the first prompt is the key (the rest share the worker).
  if (Array.isArray(o.text) && typeof o.text[0] === 'string') return { model, stream, prompt: { kind: 'texts', texts: [o.text[0]] } };
  if (Array.isArray(o.input_ids) && isTokenIds(o.input_ids[0])) return { model, stream, prompt: { kind: 'ids', ids: o.input_ids[0] } };
  throw ApiErrors.badRequest("either 'text' or 'input_ids' must be provided");
}

/**
 * The body as text for JSON.parse. Chunks are decoded one by one (a character split
 * between two chunks is carried over) and joined as a rope, so the only copy of a
 * long body is the flat string JSON.parse makes of it.
 */
function bodyText(body: Buffer | BodyChunks): string {
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  const { chunks } = body;
  if (chunks.length === 1) return chunks[0]!.toString('utf8');
  const decoder = new StringDecoder('utf8');
  let text = '';
  for (const c of chunks) text += decoder.write(c);
  return text + decoder.end();
}

function isTokenIds(v: unknown): v is number[] {
  return Array.isArray(v) && v.length > 0 && typeof v[0] === 'number' && v.every((t) => Number.isInteger(t));
}
