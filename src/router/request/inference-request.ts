import { blockHashes, chatBlockHashes, renderedChatChars, textBlockHashes } from '../../prefix/index.js';
import type { ChatMessage } from '../../prefix/index.js';
import type { BodyChunks } from '../../net/index.js';
import { StringDecoder } from 'node:string_decoder';
import { ApiErrors } from '../server/api-error.js';
import { SCAN_MIN_BYTES, scanInferenceRequest } from './json-body-scanner.js';

export type InferenceRoute = 'chat' | 'completions' | 'generate';

/** What the router needs from a generation request; the body itself is forwarded untouched. */
export interface InferenceRequest {
  route: InferenceRoute;
  model: string | undefined;
  stream: boolean;
  /** Chained block hashes of the prefix key (full blocks only). */
  prefixHashes: number[];
  /** Input tokens: exact for input_ids, estimated from characters for text. */
  inputTokens: number;
  /**
   * Where the prefix index found each block at selection, so that recording the
   * serving worker afterwards skips the table lookups (PrefixIndex.record).
   */
  prefixHints?: Int32Array;
}

/** Characters per prefix block when keying text: about 16 tokens at ~4 chars/token. */
export const CHARS_PER_TOKEN = 4;

/**
 * Parse and check a generation body, and derive its prefix key: the request's
 * `input_ids` in blocks of `blockSize` tokens when it has them, otherwise the
 * rendered prompt's UTF-8 bytes in fixed chunks of `blockSize × 4` (no tokenizer on the
 * hot path; bench/prefix-match.ts measures the choice). `keyed` false (a policy that
 * reads no prefix) skips the key: on long prompts it is most of the request's cost.
 */
export function parseInferenceRequest(route: InferenceRoute, body: Buffer | BodyChunks, blockSize: number, keyed = true, tokenKeys?: TokenKeying): InferenceRequest {
  // A long body is read in place; JSON.parse below is the reference, and has the last word.
  if (body.length >= SCAN_MIN_BYTES && tokenKeys === undefined) {
    const scanned = scanInferenceRequest(route, body, blockSize, keyed);
    if (scanned) return { route, ...scanned, prefixHashes: keyed ? scanned.prefixHashes : NO_KEY };
  }
  return parseWithJsonParse(route, body, blockSize, keyed);
}

/**
 * How to key a request when the prefix index is built from engine events
 * (docs/routing.md §Prefix from engine events): its prompt tokenized as the engine
 * tokenizes it, then hashed in blocks as the engine names its blocks.
 */
export interface TokenKeying {
  chatTokens(messages: readonly ChatMessage[]): ArrayLike<number>;
  textTokens(text: string): ArrayLike<number>;
  keys(tokens: ArrayLike<number>): number[];
}

/** parseInferenceRequest through JSON.parse: the reference the body scanner is held to, and its fallback. */
export function parseWithJsonParse(route: InferenceRoute, body: Buffer | BodyChunks, blockSize: number, keyed = true, tokenKeys?: TokenKeying): InferenceRequest {
  let json: unknown;
  try {
    json = JSON.parse(bodyText(body));
  } catch (err) {
    throw ApiErrors.badRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw ApiErrors.badRequest('request body must be a JSON object');
  const o = json as Record<string, unknown>;
  if (o.model !== undefined && typeof o.model !== 'string') throw ApiErrors.badRequest("'model' must be a string");
  if (o.stream !== undefined && o.stream !== null && typeof o.stream !== 'boolean') throw ApiErrors.badRequest("'stream' must be a boolean");

  let ids: number[] | undefined;
  let text: string | undefined;
  if (route === 'chat') {
    if (!Array.isArray(o.messages) || o.messages.length === 0) throw ApiErrors.badRequest("'messages' must be a non-empty array");
    for (const [i, m] of o.messages.entries()) {
      if (!m || typeof m !== 'object' || typeof (m as { role?: unknown }).role !== 'string') {
        throw ApiErrors.badRequest(`messages[${i}] must be an object with a string 'role'`);
      }
    }
    const messages = o.messages as ChatMessage[];
    const model = o.model as string | undefined;
    const stream = o.stream === true;
    if (keyed && tokenKeys) return byTokens(route, model, stream, tokenKeys.chatTokens(messages), tokenKeys);
    // Keyed part by part: the rendered prompt is never built as one string.
    if (!keyed) return { route, model, stream, prefixHashes: NO_KEY, inputTokens: charsToTokens(renderedChatChars(messages)) };
    const { hashes, chars } = chatBlockHashes(messages, blockSize * CHARS_PER_TOKEN);
    return { route, model, stream, prefixHashes: hashes, inputTokens: charsToTokens(chars) };
  } else if (route === 'completions') {
    if (typeof o.prompt === 'string') text = o.prompt;
    else if (isTokenIds(o.prompt)) ids = o.prompt;
    else if (Array.isArray(o.prompt) && typeof o.prompt[0] === 'string') text = o.prompt.join('');
    else throw ApiErrors.badRequest("'prompt' must be a string, an array of strings, or an array of token ids");
  } else {
    if (typeof o.text === 'string') text = o.text;
    else if (isTokenIds(o.input_ids)) ids = o.input_ids;
    else if (Array.isArray(o.text) && typeof o.text[0] === 'string') text = o.text[0];
    else if (Array.isArray(o.input_ids) && isTokenIds(o.input_ids[0])) ids = o.input_ids[0];
    else throw ApiErrors.badRequest("either 'text' or 'input_ids' must be provided");
  }

  const model = o.model as string | undefined;
  const stream = o.stream === true;
  if (keyed && tokenKeys) return byTokens(route, model, stream, ids ?? tokenKeys.textTokens(text ?? ''), tokenKeys);
  if (ids) return { route, model, stream, prefixHashes: keyed ? blockHashes(ids, blockSize) : NO_KEY, inputTokens: Math.max(1, ids.length) };
  const t = text ?? '';
  if (!keyed) return { route, model, stream, prefixHashes: NO_KEY, inputTokens: textInputTokens(t) };
  return { route, model, stream, ...textKey(t, blockSize) };
}

/**
 * The key of a prompt the router sees as text: fixed chunks of `blockSize × 4` bytes
 * of its UTF-8, and input tokens estimated from characters
 * (docs/routing.md §Text requests). Simulated-time runs key their rendered prompts
 * with it too, so they route exactly as the router does.
 */
export function textKey(text: string, blockSize: number): { prefixHashes: number[]; inputTokens: number } {
  return { prefixHashes: textBlockHashes(text, blockSize * CHARS_PER_TOKEN), inputTokens: textInputTokens(text) };
}

function textInputTokens(text: string): number {
  return charsToTokens(text.length);
}

function charsToTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
}

function byTokens(route: InferenceRoute, model: string | undefined, stream: boolean, tokens: ArrayLike<number>, keying: TokenKeying): InferenceRequest {
  return { route, model, stream, prefixHashes: keying.keys(tokens), inputTokens: Math.max(1, tokens.length) };
}

/** The key of a request no policy reads: shared, never written to. */
const NO_KEY: number[] = Object.freeze([]) as unknown as number[];

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
