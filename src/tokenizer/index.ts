export { HfChatTokenizer } from './hf-chat-tokenizer.js';
export type { ChatTokenizer, TemplateMessage } from './chat-tokenizer.js';
export { LLM_D_SIM_TOKENIZER, LlmdSimTokenizer, renderLlmdSimChat } from './llm-d-sim-tokenizer.js';
export { loadChatTokenizer } from './load-chat-tokenizer.js';
