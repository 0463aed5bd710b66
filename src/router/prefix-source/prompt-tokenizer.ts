import { renderChat, tokenize } from '../../prefix/index.js';
import type { HfChatTokenizer } from '../../tokenizer/index.js';
import type { PromptTokenizer } from '../request/request-keying.js';
import type { EventKeying } from '../state/kv-index/index.js';

/**
 * Tokens as the engines compute them (docs/routing.md §Keying requests): the stand-in
 * tokenizer for the simulator, the model's for a real engine, none without --tokenizer.
 */
export function promptTokenizer(kind: EventKeying['tokenizer'], model: HfChatTokenizer | undefined): PromptTokenizer | null {
  if (kind === 'stand-in') return { chat: (m) => tokenize(renderChat(m)), text: (t) => tokenize(t) };
  const tok = kind === 'model' ? model : undefined;
  if (tok === undefined) return null;
  return {
    // A model's template reads string contents; parts (images, audio) become tokens the router cannot know.
    chat: (m) =>
      m.every((x) => typeof x.content === 'string' || x.content === undefined || x.content === null) ? tok.encodeChat(m) : undefined,
    text: (t) => tok.encodeText(t),
  };
}
