/**
 * One way to turn chat messages into a prompt string, used everywhere (simulator,
 * router, bench) so that prefixes agree. Each message is `<|role|>\n content \n`, and
 * a generation prompt `<|assistant|>\n` ends the text. The reply of turn n therefore
 * follows the generation prompt of turn n exactly as it will appear in the history
 * of turn n+1: multi-turn prompts share the whole previous exchange as a prefix.
 */
export interface ChatMessage {
  role: string;
  content?: unknown;
  name?: string;
}

/** What opens a message in the rendered prompt. */
export function messageOpen(role: string): string {
  return `<|${role}|>\n`;
}

/** What closes a message. */
export const MESSAGE_CLOSE = '\n';

/** Characters a message's frame adds besides its role and content. */
export const MESSAGE_FRAME_CHARS = messageOpen('').length + MESSAGE_CLOSE.length;

/** The generation prompt that ends every rendered chat. */
export const ASSISTANT_PROMPT = messageOpen('assistant');

export function renderChat(messages: readonly ChatMessage[]): string {
  let out = '';
  for (const m of messages) out += messageOpen(m.role) + contentText(m.content) + MESSAGE_CLOSE;
  return out + ASSISTANT_PROMPT;
}

/** renderChat(messages).length without building the string. */
export function renderedChatChars(messages: readonly ChatMessage[]): number {
  let chars = ASSISTANT_PROMPT.length;
  for (const m of messages) chars += m.role.length + MESSAGE_FRAME_CHARS + contentChars(m.content);
  return chars;
}

/** Calls `put` with each text piece of a message content, in order (contentText, unjoined). */
export function eachContentText(content: unknown, put: (text: string) => void): void {
  if (typeof content === 'string') put(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') put((part as { text: string }).text);
    }
  }
}

/** contentText(content).length without joining the parts. */
export function contentChars(content: unknown): number {
  let n = 0;
  eachContentText(content, (t) => (n += t.length));
  return n;
}

/** Text of a message content: a string, or the text parts of an array of parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  let s = '';
  eachContentText(content, (t) => (s += t));
  return s;
}
