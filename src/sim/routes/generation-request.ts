import type { ChatMessage } from '../../prefix/index.js';
import { ownIds } from '../sim-tokenizer.js';
import type { SimTokenizer } from '../sim-tokenizer.js';

/** A validated generation request, whatever API it came through. */
export interface GenerationRequest {
  promptTokens: number[];
  maxTokens: number;
  ignoreEos: boolean;
  stream: boolean;
  includeUsage: boolean;
  dpRank: number | undefined;
  model: string | undefined;
}

export class RequestValidationError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

export function parseJsonObject(body: Buffer): Json {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new RequestValidationError(400, `Invalid JSON body: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new RequestValidationError(400, 'Request body must be a JSON object');
  }
  return value as Json;
}

export function parseChatRequest(body: Json, defaultMaxTokens: number, tokenizer: SimTokenizer): GenerationRequest {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new RequestValidationError(400, "'messages' must be a non-empty array");
  }
  for (const [i, m] of messages.entries()) {
    if (!m || typeof m !== 'object' || typeof (m as Json).role !== 'string') {
      throw new RequestValidationError(400, `messages[${i}] must be an object with a string 'role'`);
    }
  }
  return common(
    body,
    encode(() => tokenizer.encodeChat(messages as ChatMessage[])),
    maxTokensOf(body, defaultMaxTokens),
  );
}

export function parseCompletionRequest(body: Json, defaultMaxTokens: number, tokenizer: SimTokenizer): GenerationRequest {
  const prompt = body.prompt;
  let tokens: number[];
  if (typeof prompt === 'string') tokens = encode(() => tokenizer.encodeText(prompt));
  else if (isTokenArray(prompt)) tokens = prompt;
  else if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string')
    tokens = encode(() => tokenizer.encodeText(prompt[0] as string));
  else throw new RequestValidationError(400, "'prompt' must be a string or an array of token ids");
  return common(body, tokens, maxTokensOf(body, defaultMaxTokens));
}

/** SGLang's native /generate: `text` or `input_ids`, limits under `sampling_params`. */
export function parseGenerateRequest(body: Json, defaultMaxTokens: number, tokenizer: SimTokenizer): GenerationRequest {
  let tokens: number[];
  const text = body.text;
  if (typeof text === 'string') tokens = encode(() => tokenizer.encodeText(text));
  else if (isTokenArray(body.input_ids)) tokens = body.input_ids;
  else if (body.text !== undefined || body.input_ids !== undefined) {
    throw new RequestValidationError(400, 'batch requests are not supported by the simulator; send one text or input_ids');
  } else throw new RequestValidationError(400, "Either 'text' or 'input_ids' must be provided");
  const sp = body.sampling_params;
  if (sp !== undefined && (sp === null || typeof sp !== 'object' || Array.isArray(sp))) {
    throw new RequestValidationError(400, "'sampling_params' must be an object");
  }
  const params = (sp ?? {}) as Json;
  const maxTokens = intField(params, 'max_new_tokens', defaultMaxTokens, 0);
  const req = common({ ...body, ignore_eos: params.ignore_eos }, tokens, maxTokens);
  return req;
}

/** The prompt's ids through the engine's tokenizer; a prompt it cannot encode (a chat template refusing the messages) is the client's error. */
function encode(run: () => ArrayLike<number>): number[] {
  try {
    return ownIds(run());
  } catch (err) {
    throw new RequestValidationError(400, `cannot tokenize the prompt: ${(err as Error)?.message ?? String(err)}`);
  }
}

function common(body: Json, promptTokens: number[], maxTokens: number): GenerationRequest {
  if (promptTokens.length === 0) throw new RequestValidationError(400, 'The prompt is empty');
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    throw new RequestValidationError(400, "'stream' must be a boolean");
  }
  if (body.n !== undefined && body.n !== 1) {
    throw new RequestValidationError(400, "'n' other than 1 is not supported by the simulator");
  }
  if (body.model !== undefined && typeof body.model !== 'string') {
    throw new RequestValidationError(400, "'model' must be a string");
  }
  const so = body.stream_options as Json | undefined;
  const rank = body.data_parallel_rank;
  if (rank !== undefined && rank !== null && !(Number.isInteger(rank) && (rank as number) >= 0)) {
    throw new RequestValidationError(400, "'data_parallel_rank' must be a non-negative integer");
  }
  return {
    promptTokens,
    maxTokens,
    ignoreEos: body.ignore_eos === true,
    stream: body.stream === true,
    includeUsage: !!so && typeof so === 'object' && so.include_usage === true,
    dpRank: typeof rank === 'number' ? rank : undefined,
    model: body.model as string | undefined,
  };
}

function maxTokensOf(body: Json, fallback: number): number {
  if (body.max_completion_tokens !== undefined && body.max_completion_tokens !== null) {
    return intField(body, 'max_completion_tokens', fallback, 1);
  }
  return intField(body, 'max_tokens', fallback, 1);
}

function intField(obj: Json, key: string, fallback: number, min: number): number {
  const v = obj[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new RequestValidationError(400, `'${key}' must be an integer, got ${JSON.stringify(v)}`);
  }
  if (v < min) throw new RequestValidationError(400, `${key} must be at least ${min}, got ${v}.`);
  return v;
}

function isTokenArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t) && t >= 0 && t <= 0xffffffff);
}
