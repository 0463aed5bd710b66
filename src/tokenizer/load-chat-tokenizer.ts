import type { ChatTokenizer } from './chat-tokenizer.js';
import { HfChatTokenizer } from './hf-chat-tokenizer.js';
import { LLM_D_SIM_TOKENIZER, LlmdSimTokenizer } from './llm-d-sim-tokenizer.js';

/**
 * `--tokenizer`: a model's `tokenizer.json` (or its folder), or the name of a simulator's
 * stand-in tokenizer (`llm-d-inference-sim:dummy`). A file that cannot be used throws
 * RCTL_E_TOKENIZER (HfChatTokenizer.load).
 */
export function loadChatTokenizer(spec: string): ChatTokenizer {
  if (spec === LLM_D_SIM_TOKENIZER) return new LlmdSimTokenizer();
  return HfChatTokenizer.load(spec);
}
