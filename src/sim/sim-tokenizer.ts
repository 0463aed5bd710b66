import { renderChat, tokenize } from '../prefix/index.js';
import type { ChatMessage } from '../prefix/index.js';

/**
 * How a simulated engine turns a prompt into token ids
 * (docs/simulator.md §Posing as SGLang). The model's own tokenizer lives in src/tokenizer, which the simulator may
 * not import (docs/architecture.md §Layout): a command that has one passes it in
 * (`HfChatTokenizer` has this shape). The ids may be a typed array the tokenizer
 * reuses on its next call: the engine copies any array-like at once, and keeps a plain
 * array as it is (a tokenizer returns a fresh one, or copies itself).
 */
export interface SimTokenizer {
  /** The chat rendered with the model's template (generation prompt added), then encoded. */
  encodeChat(messages: readonly ChatMessage[]): ArrayLike<number>;
  /** A text prompt as the engine encodes it. */
  encodeText(text: string): ArrayLike<number>;
}

/**
 * routerctl's deterministic stand-in (src/prefix): chats rendered as the router
 * renders them, about four characters per token. What the engines use unless a
 * tokenizer is given.
 */
export const STAND_IN_TOKENIZER: SimTokenizer = Object.freeze({
  encodeChat: (messages: readonly ChatMessage[]) => tokenize(renderChat(messages)),
  encodeText: (text: string) => tokenize(text),
});

/** The ids as an array of the engine's own (a tokenizer's reused buffer copied out). */
export function ownIds(ids: ArrayLike<number>): number[] {
  return Array.isArray(ids) ? ids : Array.from(ids);
}
