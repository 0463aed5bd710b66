/** A chat message as a chat template reads it. */
export interface TemplateMessage {
  role: string;
  content?: unknown;
}

/**
 * What the router needs of `--tokenizer`: the token ids an engine computes for a prompt,
 * so requests are keyed as its KV events name its blocks
 * (docs/engine-push.md §Keying requests). A model's Hugging Face tokenizer
 * (HfChatTokenizer), or a simulator's stand-in (LlmdSimTokenizer).
 */
export interface ChatTokenizer {
  /** What `--tokenizer` said, for logs. */
  readonly name: string;
  /** The ids of a chat's prompt as the engine builds it; undefined when parts of it are beyond this tokenizer (images, audio). */
  keyChat(messages: readonly TemplateMessage[]): ArrayLike<number> | undefined;
  /** The ids of a text prompt. */
  encodeText(text: string): ArrayLike<number>;
}
