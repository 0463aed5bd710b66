import { fnv1a32 } from '../prefix/index.js';
import type { ChatTokenizer, TemplateMessage } from './chat-tokenizer.js';

/**
 * The value of `--tokenizer` that names llm-d-inference-sim's stand-in tokenizer
 * instead of a file (docs/peers.md §llm-d-inference-sim).
 */
export const LLM_D_SIM_TOKENIZER = 'llm-d-inference-sim:dummy';

/**
 * llm-d-inference-sim's stand-in tokenizer: what that simulator tokenizes with when run
 * with `--force-dummy-tokenizer`, or given a model name the hub does not know. Its KV
 * events carry these token ids, so a router that keys prompts the same way can index
 * them (docs/engine-push.md §Keying requests).
 *
 * As its source has it (pkg/tokenizer/tokenizer.go, v0.10.2): a token is one
 * punctuation mark of a fixed set, or a run of word characters, each with the
 * whitespace that follows it; any other character is dropped. Its id is FNV-1a (32-bit)
 * of the token's bytes. Go's regular expressions read `\w` as [0-9A-Za-z_] and `\s` as
 * [\t\n\f\r ], both ASCII only, so every token is ASCII and its bytes are its UTF-16
 * code units. Alternation is leftmost-first in both Go and JavaScript, so `_` and `-`,
 * listed before `\w+`, stand alone at the start of a token as they do there.
 *
 * A chat is rendered as the simulator renders it (`RenderMessages`): each message as
 * `### ` + role (`(tool_call_id)` after a tool's) + `: ` + its content + `\n`, where a
 * content of parts is its text parts and `image: URL` for image parts, joined by `\n`,
 * and each tool call follows as `[name(arguments)]`. No generation prompt is added.
 */
const TOKEN = /(\{|\}|:|,|-|\.|\?|!|;|@|#|\$|%|\^|&|\*|\(|\)|\+|-|_|~|\/|\\|>|<|\[|\]|=|"|'|\w+)([\t\n\f\r ]*)/g;

export class LlmdSimTokenizer implements ChatTokenizer {
  readonly name = LLM_D_SIM_TOKENIZER;

  encodeText(text: string): number[] {
    const ids: number[] = [];
    TOKEN.lastIndex = 0;
    for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) ids.push(fnv1a32(m[0]));
    return ids;
  }

  keyChat(messages: readonly TemplateMessage[]): number[] {
    return this.encodeText(renderLlmdSimChat(messages));
  }
}

/** The prompt llm-d-inference-sim builds from chat messages (see LlmdSimTokenizer). */
export function renderLlmdSimChat(messages: readonly TemplateMessage[]): string {
  let out = '';
  for (const m of messages) {
    out += '### ' + (typeof m.role === 'string' ? m.role : '');
    const toolCallId = (m as { tool_call_id?: unknown }).tool_call_id;
    if (typeof toolCallId === 'string' && toolCallId !== '') out += `(${toolCallId})`;
    out += ': ' + contentText(m.content);
    const calls = (m as { tool_calls?: unknown }).tool_calls;
    if (Array.isArray(calls)) {
      for (const c of calls) {
        const fn = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
        if (typeof fn?.name === 'string') out += `[${fn.name}(${typeof fn.arguments === 'string' ? fn.arguments : ''})]`;
      }
    }
    out += '\n';
  }
  return out;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const p of content as Array<Record<string, unknown> | null>) {
    if (p === null || typeof p !== 'object') continue;
    if (p.type === 'text') parts.push(typeof p.text === 'string' ? p.text : '');
    else if (p.type === 'image_url') {
      const url = (p.image_url as { url?: unknown } | undefined)?.url;
      if (p.image_url !== undefined && p.image_url !== null) parts.push('image: ' + (typeof url === 'string' ? url : ''));
    }
  }
  return parts.join('\n');
}
