import { blockHashes, chatBlockHashes, renderedChatChars, textBlockHashes } from '../../prefix/index.js';
import type { ChatMessage } from '../../prefix/index.js';

/**
 * A request's prompt as the body gives it, before keying: chat messages, text (the
 * strings of a completions prompt, or the first text of a `/generate` batch), or
 * token ids.
 */
export type Prompt =
  | { readonly kind: 'chat'; readonly messages: readonly ChatMessage[] }
  | { readonly kind: 'texts'; readonly texts: readonly string[] }
  | { readonly kind: 'ids'; readonly ids: readonly number[] };

/**
 * Tokens of a prompt as the engine computes them: its chat template and tokenizer
 * (or, for routerctl's simulator, the stand-in ones). `chat` answers undefined for
 * messages it cannot reproduce the engine's tokens of (content parts for a model
 * tokenizer: images, audio).
 */
export interface PromptTokenizer {
  chat(messages: readonly ChatMessage[]): ArrayLike<number> | undefined;
  text(text: string): ArrayLike<number>;
}

/**
 * How the router keys requests, decided once at start from what the prefix index is
 * built from (docs/routing.md §Keying requests). The one value every parse path takes,
 * so that none can key a request otherwise than another.
 * - `none`: the policy reads no prefix; only input tokens are counted.
 * - `text`: the requests index: text in fixed byte chunks, token ids in blocks.
 * - `tokens`: the events index: the engine's tokens, named as the engine names its
 *   blocks (`keys`); without a tokenizer only token ids can be keyed.
 */
export type RequestKeying =
  | { readonly by: 'none' }
  | { readonly by: 'text'; readonly blockSize: number }
  | {
      readonly by: 'tokens';
      readonly blockSize: number;
      readonly tokenizer: PromptTokenizer | null;
      readonly keys: (tokens: ArrayLike<number>) => number[];
    };

/** Why a request was routed without prefix affinity (`sgl_router_prefix_unkeyed_requests_total{reason}`). */
export type UnkeyedReason = 'no_tokenizer' | 'unsupported_input';
export const UNKEYED_REASONS: readonly UnkeyedReason[] = ['no_tokenizer', 'unsupported_input'];

export interface PromptKey {
  /** Chained block keys of the prompt's full blocks; empty when not keyed. */
  prefixHashes: number[];
  /** Input tokens: exact for token ids and tokenized prompts, estimated from characters for text. */
  inputTokens: number;
  /** Set when the keying wants a key and could not make one. */
  unkeyed?: UnkeyedReason;
}

export const NO_KEYING: RequestKeying = Object.freeze({ by: 'none' });

/** Characters per token when estimating from text: about 16 tokens per 64-byte chunk. */
export const CHARS_PER_TOKEN = 4;

/** The key of a prompt under a keying: the one place requests are keyed. */
export function keyPrompt(prompt: Prompt, keying: RequestKeying): PromptKey {
  if (keying.by === 'none') return { prefixHashes: NO_KEY, inputTokens: estimatedTokens(prompt) };
  if (keying.by === 'text') {
    const bs = keying.blockSize;
    if (prompt.kind === 'ids') return { prefixHashes: blockHashes(prompt.ids, bs), inputTokens: Math.max(1, prompt.ids.length) };
    if (prompt.kind === 'chat') {
      // Keyed part by part: the rendered prompt is never built as one string.
      const { hashes, chars } = chatBlockHashes(prompt.messages, bs * CHARS_PER_TOKEN);
      return { prefixHashes: hashes, inputTokens: charsToTokens(chars) };
    }
    return textKey(prompt.texts.join(''), bs);
  }
  if (prompt.kind === 'ids') return byTokens(prompt.ids, keying.keys);
  const tok = keying.tokenizer;
  if (tok === null) return { prefixHashes: NO_KEY, inputTokens: estimatedTokens(prompt), unkeyed: 'no_tokenizer' };
  if (prompt.kind === 'texts') return byTokens(tok.text(prompt.texts[0] ?? ''), keying.keys);
  const tokens = tok.chat(prompt.messages);
  if (tokens === undefined) return { prefixHashes: NO_KEY, inputTokens: estimatedTokens(prompt), unkeyed: 'unsupported_input' };
  return byTokens(tokens, keying.keys);
}

/**
 * The key of a prompt the router sees as text: fixed chunks of `blockSize × 4` bytes
 * of its UTF-8, and input tokens estimated from characters
 * (docs/routing.md §Text requests). Simulated-time runs key their rendered prompts
 * with it too, so they route exactly as the router does.
 */
export function textKey(text: string, blockSize: number): { prefixHashes: number[]; inputTokens: number } {
  return { prefixHashes: textBlockHashes(text, blockSize * CHARS_PER_TOKEN), inputTokens: charsToTokens(text.length) };
}

export function charsToTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
}

function estimatedTokens(prompt: Prompt): number {
  if (prompt.kind === 'ids') return Math.max(1, prompt.ids.length);
  if (prompt.kind === 'chat') return charsToTokens(renderedChatChars(prompt.messages));
  let chars = 0;
  for (const t of prompt.texts) chars += t.length;
  return charsToTokens(chars);
}

function byTokens(tokens: ArrayLike<number>, keys: (tokens: ArrayLike<number>) => number[]): PromptKey {
  return { prefixHashes: keys(tokens), inputTokens: Math.max(1, tokens.length) };
}

/** The key of a request no policy reads: shared, never written to. */
export const NO_KEY: number[] = Object.freeze([]) as unknown as number[];
