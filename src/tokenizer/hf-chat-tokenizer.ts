import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { ErrorCodes, RouterctlError } from '../errors/index.js';
import { promptBytes, textDigest } from '../prefix/index.js';
import type { ChatTokenizer, TemplateMessage } from './chat-tokenizer.js';

/** Longest text kept in the memo, in characters, over all entries. */
const MEMO_CHARS = 64 * 1024 * 1024;
/** Segments shorter than this are encoded every time: memoising them costs more than it saves. */
const MEMO_MIN_CHARS = 256;

/**
 * A Hugging Face tokenizer (`tokenizer.json`) with its model's chat template, for
 * keying requests by the tokens an engine computes (docs/engine-push.md
 * §Keying requests).
 *
 * Tokenizing a long prompt costs milliseconds per 10K tokens, far too much per request,
 * so segments are memoised: a tokenizer splits its input at added tokens (the chat
 * template's `<|im_start|>`, `<|im_end|>`, …) before anything else, and encodes the
 * text between them on its own, so encoding each segment separately and joining the
 * ids gives exactly the whole prompt's ids (checked on a corpus by
 * test/tokenizer/hf-chat-tokenizer.test.ts). A segment seen before — a system prompt,
 * a conversation's history — is a Map lookup.
 */
export class HfChatTokenizer implements ChatTokenizer {
  readonly name: string;
  readonly #tokenizer: Tokenizer;
  readonly #template: Template | undefined;
  readonly #templateVars: Record<string, unknown>;
  /** Added tokens, longest first, for splitting; null when none can be split at. */
  readonly #splitter: RegExp | null;
  readonly #addedIds: Map<string, number>;
  /** Segment digest → its ids; keyed by a digest, not the string (see textDigest). */
  readonly #memo = new Map<number, MemoEntry>();
  #memoChars = 0;
  /**
   * The ids of the prompt being encoded, in one buffer kept between requests: on this
   * scale (tens of thousands of ids) a fresh array per request is a large allocation,
   * which costs more than the encoding it holds.
   */
  #out = new Int32Array(4096);
  #length = 0;
  /** Longest added token, in characters: how far a token could reach across a content's edge. */
  readonly #longestAdded: number;
  /** Segments (by digest) holding a content, checked against a full render to be written verbatim. */
  readonly #verbatim = new Set<number>();
  fastRenders = 0;
  fullRenders = 0;
  memoHits = 0;
  memoMisses = 0;

  private constructor(
    tokenizerJson: Record<string, unknown>,
    config: Record<string, unknown>,
    template: string | undefined,
    name = 'tokenizer.json',
  ) {
    this.name = name;
    this.#tokenizer = new Tokenizer(tokenizerJson, config);
    this.#template = template === undefined ? undefined : new Template(template);
    const special = (v: unknown): string =>
      typeof v === 'string' ? v : typeof (v as { content?: unknown })?.content === 'string' ? (v as { content: string }).content : '';
    this.#templateVars = {
      bos_token: special(config.bos_token),
      eos_token: special(config.eos_token),
      pad_token: special(config.pad_token),
      unk_token: special(config.unk_token),
    };
    const added = Array.isArray(tokenizerJson.added_tokens) ? (tokenizerJson.added_tokens as Array<Record<string, unknown>>) : [];
    // Only tokens the tokenizer itself splits at exactly, with no whitespace absorbed on either side.
    const clean = added.filter(
      (t) =>
        typeof t.content === 'string' &&
        t.content !== '' &&
        t.lstrip !== true &&
        t.rstrip !== true &&
        t.single_word !== true &&
        t.normalized !== true,
    );
    this.#addedIds = new Map(clean.map((t) => [t.content as string, t.id as number]));
    const contents = [...this.#addedIds.keys()].sort((a, b) => b.length - a.length);
    this.#splitter = contents.length > 0 ? new RegExp(contents.map(escapeRegExp).join('|'), 'g') : null;
    this.#longestAdded = contents[0]?.length ?? 0;
  }

  /**
   * Load `tokenizer.json` (a path to it, or to the folder holding it) and the chat
   * template from `tokenizer_config.json` or `chat_template.jinja` beside it.
   */
  static load(where: string): HfChatTokenizer {
    const file = existsSync(where) && statSync(where).isDirectory() ? path.join(where, 'tokenizer.json') : where;
    const dir = path.dirname(file);
    const json = readJson(file, 'tokenizer.json');
    if (!isObject(json.model))
      throw tokenizerError(`${file} is not a Hugging Face tokenizer.json (it has no "model"); pass the file or the folder holding it`);
    const configFile = path.join(dir, 'tokenizer_config.json');
    const config = existsSync(configFile) ? readJson(configFile, 'tokenizer_config.json') : {};
    let template = pickTemplate(config.chat_template);
    const jinja = path.join(dir, 'chat_template.jinja');
    if (template === undefined && existsSync(jinja)) template = readFileSync(jinja, 'utf8');
    try {
      return new HfChatTokenizer(json, config, template, file);
    } catch (err) {
      throw tokenizerError(`cannot use the tokenizer in ${file}: ${(err as Error).message}`);
    }
  }

  /** The prompt an engine builds from these messages (the generation prompt added). */
  renderChat(messages: readonly TemplateMessage[]): string {
    if (!this.#template)
      throw tokenizerError('the tokenizer has no chat template (tokenizer_config.json "chat_template" or chat_template.jinja)');
    return this.#template.render({ ...this.#templateVars, messages, add_generation_prompt: true });
  }

  /**
   * Token ids of the chat's prompt; a view valid until the next call (copy it to keep it).
   *
   * A long system or user message is not copied into the rendered prompt: the template
   * is rendered with a placeholder in its place, and the prompt is read as the
   * template's pieces with the message's own string between them, so a 100K-token
   * system prompt seen before costs a digest of its bytes and a memo lookup, not a
   * few hundred kilobytes of new string. That is exact only where the template writes
   * the content verbatim: each content is checked once against a full render (the
   * request that brings it in takes the full path), and any content an added token
   * could straddle, or a template that moves the placeholder, takes the full path.
   */
  /**
   * The ids of a chat whose contents are all strings; undefined for parts (images,
   * audio), which become tokens only the engine knows. A copy is not made: the view is
   * valid until the next call.
   */
  keyChat(messages: readonly TemplateMessage[]): Int32Array | undefined {
    return messages.every((x) => typeof x.content === 'string' || x.content === undefined || x.content === null)
      ? this.encodeChat(messages)
      : undefined;
  }

  encodeChat(messages: readonly TemplateMessage[]): Int32Array {
    const pieces = this.#pieces(messages);
    if (pieces !== null) {
      const out = this.#encodePieces(pieces, 'use');
      if (out !== null) {
        this.fastRenders++;
        return out;
      }
    }
    this.fullRenders++;
    const text = this.renderChat(messages);
    // The pieces, filled in, are the prompt: their segments may take the fast path from now on.
    if (pieces !== null && pieces.texts.join('') === text) this.#encodePieces(pieces, 'register');
    return this.encodeText(text);
  }

  /**
   * The prompt as pieces in order (template text, and the long system and user
   * contents between them), or null when there is no long content or the template
   * did not write each placeholder exactly once. Assistant turns are rendered as they
   * are: templates rewrite them (reasoning blocks, tool calls).
   */
  #pieces(messages: readonly TemplateMessage[]): Pieces | null {
    const placed: number[] = [];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      if ((m.role === 'system' || m.role === 'user') && typeof m.content === 'string' && m.content.length >= MEMO_MIN_CHARS) placed.push(i);
    }
    if (placed.length === 0) return null;
    const skeleton = this.renderChat(messages.map((m, i) => (placed.includes(i) ? { ...m, content: mark(i) } : m)));
    const texts: string[] = [];
    const contents = new Set<number>();
    let at = 0;
    for (const i of placed) {
      const mk = mark(i);
      const j = skeleton.indexOf(mk, at);
      if (j < 0 || skeleton.indexOf(mk, j + mk.length) >= 0) return null;
      texts.push(skeleton.slice(at, j));
      contents.add(texts.length);
      texts.push(messages[i]!.content as string);
      at = j + mk.length;
    }
    texts.push(skeleton.slice(at));
    return { texts, contents };
  }

  /**
   * Encode the prompt from its pieces. `use`: a segment holding a content must be one
   * a full render showed to be verbatim, else null (take the full path); also null when
   * an added token could straddle two pieces. `register`: record the segments as verbatim.
   */
  #encodePieces({ texts, contents }: Pieces, mode: 'use' | 'register'): Int32Array | null {
    const splitter = this.#splitter;
    const reach = this.#longestAdded - 1;
    if (splitter !== null && reach > 0) {
      for (let k = 1; k < texts.length; k++) {
        const left = texts[k - 1]!.slice(-reach);
        const window = left + texts[k]!.slice(0, reach);
        splitter.lastIndex = 0;
        for (let m = splitter.exec(window); m !== null; m = splitter.exec(window)) {
          if (m.index < left.length && m.index + m[0].length > left.length) return null;
        }
      }
    }
    this.#length = 0;
    let seg: Array<[string, number, number]> = [];
    let segChars = 0;
    let holdsContent = false;
    let refused = false;
    const flush = (): void => {
      if (segChars > 0 && !refused) {
        if (!holdsContent) this.#segmentOf(seg, segChars, undefined);
        else if (!this.#segmentOf(seg, segChars, mode)) refused = true;
      }
      seg = [];
      segChars = 0;
      holdsContent = false;
    };
    for (let k = 0; k < texts.length && !refused; k++) {
      const p = texts[k]!;
      const isContent = contents.has(k);
      let a = 0;
      if (splitter !== null) {
        splitter.lastIndex = 0;
        for (let m = splitter.exec(p); m !== null; m = splitter.exec(p)) {
          if (m.index > a) {
            seg.push([p, a, m.index]);
            segChars += m.index - a;
            holdsContent ||= isContent;
          }
          flush();
          this.#append1(this.#addedIds.get(m[0])!);
          a = m.index + m[0].length;
        }
      }
      if (a < p.length) {
        seg.push([p, a, p.length]);
        segChars += p.length - a;
        holdsContent ||= isContent;
      }
    }
    flush();
    return refused ? null : this.#out.subarray(0, this.#length);
  }

  /** Token ids of a text as the engine encodes a prompt (no special tokens added); a view valid until the next call. */
  encodeText(text: string): Int32Array {
    this.#length = 0;
    const splitter = this.#splitter;
    if (splitter === null) {
      this.#segment(text);
      return this.#out.subarray(0, this.#length);
    }
    splitter.lastIndex = 0;
    let at = 0;
    for (let m = splitter.exec(text); m !== null; m = splitter.exec(text)) {
      if (m.index > at) this.#segment(text.slice(at, m.index));
      this.#append1(this.#addedIds.get(m[0])!);
      at = m.index + m[0].length;
    }
    if (at < text.length) this.#segment(text.slice(at));
    return this.#out.subarray(0, this.#length);
  }

  /** The whole text through the tokenizer at once: the reference the segments are held to. */
  encodeWhole(text: string): number[] {
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /**
   * A segment given as slices of pieces: digested in place, and put together only when
   * it must be encoded. With a `verbatim` mode (the segment holds a message's content):
   * `use` appends only a segment known verbatim (false otherwise, nothing appended);
   * `register` records it as verbatim.
   */
  #segmentOf(parts: Array<[string, number, number]>, chars: number, verbatim: 'use' | 'register' | undefined): boolean {
    const slice = ([p, a, b]: [string, number, number]): string => (a === 0 && b === p.length ? p : p.slice(a, b));
    if (chars < MEMO_MIN_CHARS) {
      if (verbatim !== undefined) return false;
      this.#segment(parts.length === 1 ? slice(parts[0]!) : parts.map(slice).join(''));
      return true;
    }
    promptBytes.begin(chars * 3);
    for (const part of parts) promptBytes.putString(slice(part));
    const digest = promptBytes.digest();
    if (verbatim === 'register') {
      if (this.#verbatim.size >= 100_000) this.#verbatim.clear();
      this.#verbatim.add(digest);
      return true;
    }
    if (verbatim === 'use' && !this.#verbatim.has(digest)) return false;
    this.#segment(undefined, digest, chars, () => parts.map(slice).join(''));
    return true;
  }

  /**
   * Append one segment's ids: through the memo when it is long. A segment may come as
   * its digest and length, with the text made only on a miss.
   */
  #segment(text: string | undefined, digest?: number, chars?: number, make?: () => string): void {
    const length = text?.length ?? chars!;
    if (text !== undefined && length < MEMO_MIN_CHARS) {
      for (const id of this.encodeWhole(text)) this.#append1(id);
      return;
    }
    const key = digest ?? textDigest(text!);
    let entry = this.#memo.get(key);
    // The digest is 52 bits over the bytes and the length; the length is checked again for certainty's sake.
    if (entry !== undefined && entry.chars === length) {
      this.memoHits++;
      // Most recently used last: the Map's order is the eviction order.
      this.#memo.delete(key);
      this.#memo.set(key, entry);
    } else {
      this.memoMisses++;
      entry = { ids: Int32Array.from(this.encodeWhole(text ?? make!())), chars: length };
      this.#memo.set(key, entry);
      this.#memoChars += length;
      for (const [k, e] of this.#memo) {
        if (this.#memoChars <= MEMO_CHARS) break;
        this.#memo.delete(k);
        this.#memoChars -= e.chars;
      }
    }
    this.#reserve(entry.ids.length);
    this.#out.set(entry.ids, this.#length);
    this.#length += entry.ids.length;
  }

  #append1(id: number): void {
    this.#reserve(1);
    this.#out[this.#length++] = id;
  }

  #reserve(more: number): void {
    const need = this.#length + more;
    if (need <= this.#out.length) return;
    const grown = new Int32Array(Math.max(need, this.#out.length * 2));
    grown.set(this.#out.subarray(0, this.#length));
    this.#out = grown;
  }
}

/** A prompt as the template's text and the long contents between, in order. */
interface Pieces {
  readonly texts: string[];
  /** Indexes of `texts` that are message contents. */
  readonly contents: ReadonlySet<number>;
}

interface MemoEntry {
  readonly ids: Int32Array;
  readonly chars: number;
}

function pickTemplate(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  // A list of named templates: the default one.
  if (Array.isArray(v)) {
    const named = v.find((t) => isObject(t) && t.name === 'default') ?? v[0];
    return isObject(named) && typeof named.template === 'string' ? named.template : undefined;
  }
  return undefined;
}

function readJson(file: string, what: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw tokenizerError(`cannot read ${what} at ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    const v = JSON.parse(text) as unknown;
    if (!isObject(v)) throw new Error('not a JSON object');
    return v;
  } catch (err) {
    throw tokenizerError(`${file} is not valid ${what}: ${(err as Error).message}`);
  }
}

function tokenizerError(message: string): RouterctlError {
  return new RouterctlError(ErrorCodes.TOKENIZER, message);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A placeholder no message or template writes: NUL bytes around a position. */
function mark(i: number): string {
  return `\u0000routerctl-content-${i}\u0000`;
}
