export { HfChatTokenizer } from './hf-chat-tokenizer.js';
export type { TemplateMessage } from './hf-chat-tokenizer.js';
