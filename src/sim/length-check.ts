import type { EngineParams } from './engine-params.js';
import type { Flavor } from './http/responses.js';

/**
 * Why an engine refuses a request for its length: it does not fit the model's context
 * (`context_length`), or it fits the context but not the KV pool (`kv_capacity`). A
 * report that lumps the two together blames the cache for what the context length
 * did (docs/simulator.md §Refusals for length).
 */
export type LengthRefusalReason = 'context_length' | 'kv_capacity';

export interface LengthRefusal {
  reason: LengthRefusalReason;
  /** The engine's own message, as its 400 body carries it. */
  message: string;
}

/**
 * The length checks a request meets on its way into the engine, in the engine's order
 * and words; undefined when it passes them. SGLang's tokenizer refuses an input of at
 * least the context length, then an input plus max_new_tokens over it
 * (`validate_total_tokens`, on by default); vLLM refuses the same two cases in its own
 * words. Then the KV pool: the simulator reserves a request's whole output, so it
 * refuses what could not fit an empty engine (prompt plus max_tokens over the pool), in
 * SGLang's scheduler's words for SGLang, with the longest input the pool then allows.
 * vLLM will not start with a max_model_len its KV cache cannot hold, so for vLLM that
 * refusal is the simulator's own case, and says so.
 */
export function checkLength(flavor: Flavor, p: Readonly<EngineParams>, inputTokens: number, maxTokens: number): LengthRefusal | undefined {
  const context = p.maxModelLen;
  const kvTokens = p.kvBlocks * p.blockSize;
  const fitsPool = Math.ceil((inputTokens + maxTokens) / p.blockSize) <= p.kvBlocks;
  if (flavor === 'sglang') {
    if (inputTokens >= context) {
      return refuse('context_length', `The input (${inputTokens} tokens) is longer than the model's context length (${context} tokens).`);
    }
    if (inputTokens + maxTokens > context) {
      return refuse(
        'context_length',
        `Requested token count exceeds the model's maximum context length of ${context} tokens. ` +
          `You requested a total of ${inputTokens + maxTokens} tokens: ${inputTokens} tokens from the input messages and ` +
          `${maxTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion ` +
          'to fit within the limit.',
      );
    }
    if (!fitsPool) {
      return refuse(
        'kv_capacity',
        `Input length (${inputTokens} tokens) exceeds the maximum allowed length (${Math.max(0, kvTokens - maxTokens)} tokens). ` +
          'Use a shorter input or enable --allow-auto-truncate.',
      );
    }
    return undefined;
  }
  if (inputTokens >= context) {
    return refuse(
      'context_length',
      `This model's maximum context length is ${context} tokens. However, your request has ${inputTokens} input tokens. ` +
        'Please reduce the length of the input messages.',
    );
  }
  if (inputTokens + maxTokens > context) {
    return refuse(
      'context_length',
      `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${context} tokens ` +
        `and your request has ${inputTokens} input tokens (${maxTokens} > ${context} - ${inputTokens}).`,
    );
  }
  if (!fitsPool) {
    return refuse(
      'kv_capacity',
      `The request needs ${inputTokens + maxTokens} tokens of KV cache, more than the ${kvTokens} the cache holds ` +
        `(simulator: vLLM would not start with max_model_len ${context} on this cache).`,
    );
  }
  return undefined;
}

function refuse(reason: LengthRefusalReason, message: string): LengthRefusal {
  return { reason, message };
}

/**
 * The reason behind an engine's 400 for length, read from its message: the wordings of
 * checkLength, SGLang's and vLLM's. Undefined for any other message. For a client of
 * the engines over HTTP (a bench counting refusals by reason).
 */
export function lengthRefusalReason(message: string): LengthRefusalReason | undefined {
  if (/exceeds the maximum allowed length|tokens of KV cache, more than/.test(message)) return 'kv_capacity';
  if (/longer than the model's context length|maximum context length/.test(message)) return 'context_length';
  return undefined;
}
