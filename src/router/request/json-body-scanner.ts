import { isAscii, isUtf8 } from 'node:buffer';
import type { BodyChunks } from '../../net/index.js';
import { ASSISTANT_PROMPT, MESSAGE_CLOSE, MESSAGE_FRAME_CHARS, messageOpen, promptBytes } from '../../prefix/index.js';
import type { InferenceRoute } from './inference-route.js';
import { CHARS_PER_TOKEN, charsToTokens, keyPrompt, NO_KEY } from './request-keying.js';
import type { Prompt, PromptKey, RequestKeying } from './request-keying.js';

/**
 * The fields of a generation body the router needs, read from the body's bytes
 * without building its JavaScript value (docs/routing.md §Text requests).
 *
 * JSON.parse of a long body allocates the whole body as a string and every long
 * prompt string again; on a body of hundreds of kilobytes those allocations cost more
 * than everything else the router does with the request. This scanner checks the
 * whole body against the JSON grammar and copies only the prompt's bytes into the
 * keying area. When requests are keyed by tokens (the events index), the prompt's
 * strings are decoded instead, for the tokenizer, and keyed as every parse path keys
 * (keyPrompt). It handles the common shapes; on anything else (an error to report, a
 * duplicate key, token ids, invalid UTF-8, a lone surrogate, and for token keying a
 * message with more than a string role and content) it answers `undefined` and the
 * caller parses with JSON.parse, which then gives the same result or the error. So it
 * never decides anything JSON.parse would decide differently; a differential test
 * holds it to that, under every keying.
 */
export interface ScannedRequest extends PromptKey {
  model: string | undefined;
  stream: boolean;
}

/** Below this size JSON.parse is faster and allocates nothing large: the scanner is not used. */
export const SCAN_MIN_BYTES = 64 * 1024;

const MAX_DEPTH = 512;
const GIVE_UP = new Error('scan: give up');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** A string's bytes between its quotes, and whether it holds escapes. */
interface Span {
  start: number;
  end: number;
  escaped: boolean;
}

/** Where a body of several chunks is joined for scanning; reused, since scanning is synchronous. */
let joined = Buffer.allocUnsafeSlow(1 << 16);
const JOINED_RETAINED = 8 << 20;

function contiguous(body: Buffer | BodyChunks): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (body.chunks.length === 1) return body.chunks[0]!;
  if (joined.length < body.length) joined = Buffer.allocUnsafeSlow(2 ** Math.ceil(Math.log2(body.length)));
  let at = 0;
  for (const c of body.chunks) {
    c.copy(joined, at);
    at += c.length;
  }
  return joined.subarray(0, at);
}

export function scanInferenceRequest(route: InferenceRoute, body: Buffer | BodyChunks, keying: RequestKeying): ScannedRequest | undefined {
  try {
    const scanner = new Scanner(contiguous(body), keying.by === 'tokens');
    if (keying.by !== 'tokens') return scanner.request(route, keying.by === 'text' ? keying.blockSize : 0, keying.by === 'text');
    const { model, stream, prompt } = scanner.prompt(route);
    return { model, stream, ...keyPrompt(prompt, keying) };
  } catch (err) {
    if (err === GIVE_UP) return undefined;
    throw err;
  } finally {
    // A join area grown for one huge body is let go after it, not kept for the process's life.
    if (joined.length > JOINED_RETAINED) joined = Buffer.allocUnsafeSlow(1 << 16);
  }
}

/** One chat message: its role, and the spans of its content's text, in order. */
interface Message {
  role: string;
  parts: Span[];
  /** Its content when that is one string (always so when scanning strictly); undefined when it has none. */
  content: Span | undefined;
}

class Scanner {
  private i = 0;
  /** The body as 32-bit words from its first 4-byte-aligned byte, for the string fast path. */
  private readonly words: Uint32Array;
  /** Index in `b` of the first byte of words[0]. */
  private readonly wordsAt: number;

  /**
   * @param strict for a prompt to decode: a message may hold only a string role and a
   * string content, since a chat template reads every member (a reader of text spans
   * reads only those two).
   */
  constructor(
    private readonly b: Buffer,
    private readonly strict = false,
  ) {
    const aligned = (b.byteOffset + 3) & ~3;
    this.wordsAt = Math.min(aligned - b.byteOffset, b.length);
    this.words = new Uint32Array(b.buffer, b.byteOffset + this.wordsAt, (b.length - this.wordsAt) >>> 2);
  }

  /**
   * The first index from `i` that may end a string's plain run: a quote, a backslash
   * or a control byte, or the end. Four bytes at a time (SWAR: a word has a byte equal
   * to q when (w ^ q·0x01010101) has a zero byte, and one below 0x20 when
   * (w − 0x20202020) & ~w & 0x80808080 is not 0); the loop over a long prompt is
   * most of the scan.
   */
  private plainUntil(i: number): number {
    const b = this.b;
    // Up to the first aligned word, byte by byte.
    while (i < this.wordsAt || ((i - this.wordsAt) & 3) !== 0) {
      if (i >= b.length || isSpecial(b[i]!)) return i;
      i++;
    }
    const words = this.words;
    let k = (i - this.wordsAt) >>> 2;
    for (; k < words.length; k++) {
      const w = words[k]!;
      const q = w ^ 0x22222222;
      const s = w ^ 0x5c5c5c5c;
      if ((((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s) | ((w - 0x20202020) & ~w)) & 0x80808080) break;
    }
    i = this.wordsAt + k * 4;
    while (i < b.length && !isSpecial(b[i]!)) i++;
    return i;
  }

  /** The body's members the router reads, checked against the grammar to its last byte. */
  private fields(route: InferenceRoute): {
    model: string | undefined;
    stream: boolean;
    messages: Message[] | undefined;
    textParts: Span[] | undefined;
  } {
    const b = this.b;
    let model: string | undefined;
    let stream = false;
    let messages: Message[] | undefined;
    let textParts: Span[] | undefined;
    this.ws();
    let members = 0;
    this.object((key) => {
      members++;
      if (key === 'model') {
        if (b[this.i] !== QUOTE) throw GIVE_UP;
        model = this.smallString();
      } else if (key === 'stream') {
        if (this.literal('true')) stream = true;
        else if (this.literal('false') || this.literal('null')) stream = false;
        else throw GIVE_UP;
      } else if (route === 'chat' && key === 'messages') messages = this.messages();
      else if (route === 'completions' && key === 'prompt') textParts = this.stringOrStrings(true);
      else if (route === 'generate' && key === 'text') textParts = this.stringOrStrings(false);
      else if (route === 'generate' && key === 'input_ids') throw GIVE_UP;
      else this.skipValue(0);
    });
    if (members === 0) throw GIVE_UP; // {} is an error to report
    this.ws();
    if (this.i !== b.length) throw GIVE_UP;
    if (route === 'chat' ? messages === undefined : textParts === undefined) throw GIVE_UP;
    return { model, stream, messages, textParts };
  }

  /** The prompt with its strings decoded, as JSON.parse would give them. */
  prompt(route: InferenceRoute): { model: string | undefined; stream: boolean; prompt: Prompt } {
    const { model, stream, messages, textParts } = this.fields(route);
    if (messages) {
      const decoded = messages.map((m) => (m.content === undefined ? { role: m.role } : { role: m.role, content: this.decode(m.content) }));
      return { model, stream, prompt: { kind: 'chat', messages: decoded } };
    }
    return { model, stream, prompt: { kind: 'texts', texts: textParts!.map((p) => this.decode(p)) } };
  }

  /** A span's string exactly as JSON.parse decodes it (invalid UTF-8 becomes U+FFFD in both). */
  private decode(s: Span): string {
    if (!isUtf8(this.b.subarray(s.start, s.end))) throw GIVE_UP;
    if (!s.escaped) return this.b.toString('utf8', s.start, s.end);
    return JSON.parse(this.b.toString('utf8', s.start - 1, s.end + 1)) as string;
  }

  request(route: InferenceRoute, blockSize: number, keyed: boolean): ScannedRequest {
    const { model, stream, messages, textParts } = this.fields(route);
    const chunkBytes = blockSize * CHARS_PER_TOKEN;
    if (messages) {
      let maxBytes = Buffer.byteLength(ASSISTANT_PROMPT);
      for (const m of messages) {
        maxBytes += Buffer.byteLength(m.role) + MESSAGE_FRAME_CHARS;
        for (const p of m.parts) maxBytes += p.end - p.start;
      }
      if (keyed) promptBytes.begin(maxBytes);
      let chars = ASSISTANT_PROMPT.length;
      for (const m of messages) {
        chars += m.role.length + MESSAGE_FRAME_CHARS;
        if (keyed) promptBytes.putString(messageOpen(m.role));
        for (const p of m.parts) chars += this.put(p, keyed);
        if (keyed) promptBytes.putString(MESSAGE_CLOSE);
      }
      if (keyed) promptBytes.putString(ASSISTANT_PROMPT);
      return { model, stream, prefixHashes: keyed ? promptBytes.hashes(chunkBytes) : NO_KEY, inputTokens: charsToTokens(chars) };
    }
    let maxBytes = 0;
    for (const p of textParts!) maxBytes += p.end - p.start;
    if (keyed) promptBytes.begin(maxBytes);
    let chars = 0;
    for (const p of textParts!) chars += this.put(p, keyed);
    return { model, stream, prefixHashes: keyed ? promptBytes.hashes(chunkBytes) : NO_KEY, inputTokens: charsToTokens(chars) };
  }

  /** messages: a non-empty array of objects with a string role. */
  private messages(): Message[] {
    const out: Message[] = [];
    this.array(() => out.push(this.message()));
    if (out.length === 0) throw GIVE_UP;
    return out;
  }

  private message(): Message {
    const b = this.b;
    let role: string | undefined;
    let parts: Span[] = [];
    let content: Span | undefined;
    this.object((key) => {
      if (key === 'role') {
        if (b[this.i] !== QUOTE) throw GIVE_UP;
        role = this.smallString();
      } else if (key === 'content') {
        const isString = b[this.i] === QUOTE;
        if (this.strict && !isString) throw GIVE_UP;
        parts = this.content();
        if (isString) content = parts[0];
      } else if (this.strict) throw GIVE_UP;
      else this.skipValue(1);
    });
    if (role === undefined) throw GIVE_UP;
    return { role, parts, content };
  }

  /** A content: a string, an array of parts whose `text` strings count, or anything else (no text). */
  private content(): Span[] {
    const b = this.b;
    if (b[this.i] === QUOTE) return [this.span()];
    if (b[this.i] !== 0x5b) {
      this.skipValue(2);
      return [];
    }
    const out: Span[] = [];
    this.array(() => {
      if (b[this.i] !== 0x7b) return this.skipValue(3);
      // A part: its `text`, when a string, is what it contributes.
      this.object((key) => {
        if (key === 'text' && b[this.i] === QUOTE) out.push(this.span());
        else this.skipValue(4);
      });
    });
    return out;
  }

  /**
   * The members of the object at the cursor: `member` reads each value, the cursor at
   * it. Keys are decoded as JSON.parse decodes them; a repeated key declines (JSON.parse
   * keeps the last, which a reader that decides as it goes could not).
   */
  private object(member: (key: string) => void): void {
    const b = this.b;
    this.expect(0x7b);
    this.ws();
    if (b[this.i] === 0x7d) {
      this.i++;
      return;
    }
    const seen = new Set<string>();
    for (;;) {
      this.ws();
      const key = this.smallString();
      if (seen.has(key)) throw GIVE_UP;
      seen.add(key);
      this.ws();
      this.expect(0x3a);
      this.ws();
      member(key);
      this.ws();
      if (b[this.i] !== 0x2c) break;
      this.i++;
    }
    this.expect(0x7d);
  }

  /** The elements of the array at the cursor: `element` reads each, the cursor at it. */
  private array(element: () => void): void {
    const b = this.b;
    this.expect(0x5b);
    this.ws();
    if (b[this.i] === 0x5d) {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      element();
      this.ws();
      if (b[this.i] !== 0x2c) break;
      this.i++;
    }
    this.expect(0x5d);
  }

  /**
   * A string, or an array of strings: all of them (`prompt`, joined) or the first
   * (`text` of a batch, the rest skipped). Anything else is left to JSON.parse.
   */
  private stringOrStrings(all: boolean): Span[] {
    const b = this.b;
    if (b[this.i] === QUOTE) return [this.span()];
    if (b[this.i] !== 0x5b) throw GIVE_UP;
    const out: Span[] = [];
    this.array(() => {
      if (b[this.i] === QUOTE && (all || out.length === 0)) out.push(this.span());
      else if (all || out.length === 0) throw GIVE_UP;
      else this.skipValue(2);
    });
    if (out.length === 0) throw GIVE_UP;
    return out;
  }

  /**
   * Put a span's text into the prompt (when keyed) and return its length in UTF-16
   * code units. Raw bytes must be valid UTF-8, escapes must not leave a lone
   * surrogate: otherwise JSON.parse decides (it substitutes U+FFFD).
   */
  private put(s: Span, keyed: boolean): number {
    const b = this.b;
    const raw = b.subarray(s.start, s.end);
    // ASCII (most prompts) is valid UTF-8 of one code unit per byte: one native pass.
    const ascii = isAscii(raw);
    if (!ascii && !isUtf8(raw)) throw GIVE_UP;
    if (!s.escaped) {
      if (keyed) promptBytes.putBytes(b, s.start, s.end);
      return ascii ? raw.length : utf16Units(b, s.start, s.end);
    }
    let units = 0;
    let run = s.start;
    let i = s.start;
    while (i < s.end) {
      // Runs between escapes are found natively (memchr), and counted natively when ASCII.
      const next = b.indexOf(BACKSLASH, i);
      if (next < 0 || next >= s.end) break;
      i = next;
      units += ascii ? i - run : utf16Units(b, run, i);
      if (keyed) promptBytes.putBytes(b, run, i);
      const e = b[i + 1]!;
      let cp: number;
      i += 2;
      if (e === 0x75) {
        cp = hex4(b, i);
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (b[i] !== BACKSLASH || b[i + 1] !== 0x75) throw GIVE_UP;
          const lo = hex4(b, i + 2);
          if (lo < 0xdc00 || lo > 0xdfff) throw GIVE_UP;
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          i += 6;
          units += 2;
        } else if (cp >= 0xdc00 && cp <= 0xdfff) throw GIVE_UP;
        else units += 1;
      } else {
        cp = SIMPLE_ESCAPE[e]!;
        units += 1;
      }
      if (keyed) promptBytes.putCodePoint(cp);
      run = i;
    }
    units += ascii ? s.end - run : utf16Units(b, run, s.end);
    if (keyed) promptBytes.putBytes(b, run, s.end);
    return units;
  }

  /** A short string (a key, a role, a model) decoded exactly as JSON.parse decodes it. */
  private smallString(): string {
    const start = this.i;
    const s = this.span();
    if (!s.escaped) return this.b.toString('utf8', s.start, s.end);
    return JSON.parse(this.b.toString('utf8', start, s.end + 1)) as string;
  }

  /** A string at the cursor, checked against the grammar; the cursor moves past it. */
  private span(): Span {
    const b = this.b;
    this.expect(QUOTE);
    const start = this.i;
    let escaped = false;
    const n = b.length;
    let i = this.i;
    for (;;) {
      i = this.plainUntil(i);
      if (i >= n) throw GIVE_UP;
      const c = b[i]!;
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        const e = b[i + 1];
        if (e === 0x75) {
          if (Number.isNaN(hex4(b, i + 2))) throw GIVE_UP;
          i += 6;
        } else if (e !== undefined && SIMPLE_ESCAPE[e] !== undefined) i += 2;
        else throw GIVE_UP;
        continue;
      }
      if (c < 0x20) throw GIVE_UP;
      i++;
    }
    this.i = i + 1;
    return { start, end: i, escaped };
  }

  private skipValue(depth: number): void {
    if (depth > MAX_DEPTH) throw GIVE_UP;
    const c = this.b[this.i];
    if (c === QUOTE) this.span();
    else if (c === 0x7b) this.object(() => this.skipValue(depth + 1));
    else if (c === 0x5b) this.array(() => this.skipValue(depth + 1));
    else if (!(this.literal('true') || this.literal('false') || this.literal('null'))) this.number();
  }

  /** -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
  private number(): void {
    const b = this.b;
    let i = this.i;
    if (b[i] === 0x2d) i++;
    if (b[i] === 0x30) i += 1;
    else if (isDigit(b[i]) && b[i] !== 0x30) while (isDigit(b[i])) i++;
    else throw GIVE_UP;
    if (b[i] === 0x2e) {
      i++;
      if (!isDigit(b[i])) throw GIVE_UP;
      while (isDigit(b[i])) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      if (!isDigit(b[i])) throw GIVE_UP;
      while (isDigit(b[i])) i++;
    }
    this.i = i;
  }

  private literal(word: 'true' | 'false' | 'null'): boolean {
    const b = this.b;
    for (let k = 0; k < word.length; k++) if (b[this.i + k] !== word.charCodeAt(k)) return false;
    this.i += word.length;
    return true;
  }

  private ws(): void {
    const b = this.b;
    let i = this.i;
    for (let c = b[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = b[++i]);
    this.i = i;
  }

  private expect(c: number): void {
    if (this.b[this.i] !== c) throw GIVE_UP;
    this.i++;
  }
}

/** The character a one-letter escape stands for, by the letter's byte. */
const SIMPLE_ESCAPE: Record<number, number> = {
  0x22: 0x22,
  0x5c: 0x5c,
  0x2f: 0x2f,
  0x62: 0x08,
  0x66: 0x0c,
  0x6e: 0x0a,
  0x72: 0x0d,
  0x74: 0x09,
};

/** A byte that ends a string's plain run: a quote, a backslash, or a control byte. */
function isSpecial(c: number): boolean {
  return c === QUOTE || c === BACKSLASH || c < 0x20;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** Four hex digits at `at` as a number, or NaN. */
function hex4(b: Buffer, at: number): number {
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const c = b[at + k];
    const d =
      c === undefined ? -1 : c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return NaN;
    v = (v << 4) | d;
  }
  return v;
}

/** UTF-16 code units of valid UTF-8 bytes: one per sequence, two for a 4-byte one. */
function utf16Units(b: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = b[i]!;
    if ((c & 0xc0) !== 0x80) n += c >= 0xf0 ? 2 : 1;
  }
  return n;
}
