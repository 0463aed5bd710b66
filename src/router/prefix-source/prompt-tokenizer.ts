import { renderChat, tokenize } from '../../prefix/index.js';
import type { ChatTokenizer } from '../../tokenizer/index.js';
import type { PromptTokenizer } from '../request/request-keying.js';
import type { EventKeying } from '../state/kv-index/index.js';

/**
 * Tokens as the engines compute them (docs/routing.md §Keying requests): the stand-in
 * tokenizer for the simulator, `--tokenizer`'s for a real engine (the model's, or
 * llm-d-inference-sim's stand-in), none without it.
 */
export function promptTokenizer(kind: EventKeying['tokenizer'], model: ChatTokenizer | undefined): PromptTokenizer | null {
  if (kind === 'stand-in') return { chat: (m) => tokenize(renderChat(m)), text: (t) => tokenize(t) };
  const tok = kind === 'model' ? model : undefined;
  if (tok === undefined) return null;
  // keyChat says when a chat has parts (images, audio) whose tokens only the engine knows.
  return { chat: (m) => tok.keyChat(m), text: (t) => tok.encodeText(t) };
}
