/**
 * The body scanner (src/router/request/json-body-scanner.ts) against its reference,
 * JSON.parse: whenever it answers, the answer equals the reference's, and the
 * reference accepts the body; when in doubt it declines. Table cases for the shapes
 * it must handle itself, then random bodies, valid and broken.
 */
import { describe, expect, it } from 'vitest';
import { parseWithJsonParse } from '../../src/router/request/inference-request.js';
import type { InferenceRoute } from '../../src/router/request/inference-request.js';
import { scanInferenceRequest } from '../../src/router/request/json-body-scanner.js';
import { Rng } from '../../src/sim/index.js';

function reference(route: InferenceRoute, body: Buffer, keyed: boolean) {
  try {
    const r = parseWithJsonParse(route, body, 16, keyed);
    return { model: r.model, stream: r.stream, prefixHashes: keyed ? r.prefixHashes : [], inputTokens: r.inputTokens };
  } catch {
    return 'rejected' as const;
  }
}

function agree(route: InferenceRoute, body: Buffer, keyed = true): 'scanned' | 'declined' {
  const s = scanInferenceRequest(route, body, 16, keyed);
  if (s === undefined) return 'declined';
  expect(s, body.toString('utf8').slice(0, 200)).toEqual(reference(route, body, keyed));
  return 'scanned';
}

const long = 'The runbook says: restart the pod, then check the queue. '.repeat(40);

describe('json body scanner: shapes it reads itself, equal to JSON.parse', () => {
  it.each<[string, InferenceRoute, string]>([
    ['chat, string contents', 'chat', JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'system', content: long }, { role: 'user', content: 'hi' }] })],
    ['chat, escapes of every kind', 'chat', `{"messages":[{"role":"us\\u0065r","content":"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00 ${long}"}]}`],
    ['chat, raw multi-byte text', 'chat', JSON.stringify({ messages: [{ role: 'user', content: `état 状態 🙂 ${long}` }] })],
    ['chat, content parts and other values', 'chat', JSON.stringify({ messages: [{ name: 'x', role: 'user', content: [{ type: 'text', text: long }, { type: 'image_url', image_url: { url: 'u' } }, 7, null, { text: 5 }, { type: 'text', text: 'tail' }] }, { role: 'assistant', content: null }, { role: 'tool', content: { a: 1 } }] })],
    ['chat, extras of every JSON type and white space', 'chat', `{ "n" : -0.5e+3 , "a":[1,2.25,-3E-2,true,false,null,{"x":[[]]}], "messages" :\n[ {"role":"user" ,\t"content": "${long}"} ] , "stream": null }`],
    ['completions, a string', 'completions', JSON.stringify({ prompt: long, max_tokens: 4 })],
    ['completions, strings joined', 'completions', JSON.stringify({ prompt: [long, 'and ', 'more'] })],
    ['generate, text', 'generate', JSON.stringify({ text: long, sampling_params: { max_new_tokens: 4 } })],
    ['generate, a batch: the first text', 'generate', JSON.stringify({ text: [long, 7, 'second'] })],
  ])('%s', (_, route, text) => {
    expect(agree(route, Buffer.from(text))).toBe('scanned');
    expect(agree(route, Buffer.from(text), false)).toBe('scanned');
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
  ])('declines %s (JSON.parse decides)', (_, route, text) => {
    expect(scanInferenceRequest(route, Buffer.from(text, 'latin1'), 16, true)).toBeUndefined();
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
      return [() => rng.int(1000) - 500, () => rng.next() * 10, () => null, () => rng.next() < 0.5, text, () => [extra(d + 1), extra(d + 1)], () => ({ k: extra(d + 1) })][k]!();
    };
    const content = (): unknown => (rng.next() < 0.7 ? text() : [{ type: 'text', text: text() }, extra(0), { text: text() }]);
    const body = (route: InferenceRoute): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      if (rng.next() < 0.5) o.model = text();
      if (rng.next() < 0.3) o.stream = pick([true, false, null, 1]);
      if (rng.next() < 0.5) o.extra = extra(0);
      if (route === 'chat') o.messages = Array.from({ length: 1 + rng.int(4) }, () => ({ role: pick(['user', 'system', 'assistant', 'tool']), content: content() }));
      else if (route === 'completions') o.prompt = rng.next() < 0.8 ? text() : [text(), text()];
      else o.text = rng.next() < 0.8 ? text() : [text(), extra(0)];
      return o;
    };
    const escapeSome = (json: string): string =>
      json.replace(/[a-zé]|🙂/gu, (c) => (rng.next() < (c === '🙂' ? 0.5 : 0.1) ? Array.from({ length: c.length }, (_, k) => `\\u${c.charCodeAt(k).toString(16).padStart(4, '0')}`).join('') : c));
    const spaces = (json: string): string => json.replace(/[,:[\]{}]/g, (c) => (rng.next() < 0.2 ? ` ${c}\n ` : c));
    const mutate = (buf: Buffer): Buffer => {
      const out = Buffer.from(buf);
      const k = rng.int(4);
      if (k === 0) return out.subarray(0, rng.int(out.length));
      if (k === 1) out[rng.int(out.length)] = rng.int(256);
      if (k === 2) return Buffer.concat([out.subarray(0, out.length - 1), Buffer.from(pick([',}', ' ', '}', ']}', '0']))]);
      return out;
    };
    let scanned = 0;
    let valid = 0;
    for (let n = 0; n < 3000; n++) {
      const route = pick<InferenceRoute>(['chat', 'completions', 'generate']);
      let buf = Buffer.from(spaces(escapeSome(JSON.stringify(body(route)))));
      const broken = rng.next() < 0.3;
      if (broken) buf = mutate(buf);
      else valid++;
      if (agree(route, buf, rng.next() < 0.8) === 'scanned' && !broken) scanned++;
    }
    // Not a vacuous agreement: most valid bodies are read by the scanner itself.
    expect(scanned / valid).toBeGreaterThan(0.7);
  });
});
