import { describe, expect, it } from 'vitest';
import {
  blockHashes,
  chatBlockHashes,
  countTokens,
  pieces,
  renderChat,
  renderedChatChars,
  sglangPageHashes,
  textBlockHashes,
  tokenize,
} from '../../src/prefix/index.js';

describe('sglangPageHashes (golden vectors from the reference router)', () => {
  it.each([
    { tokens: [1, 2, 3, 4], page: 4, want: ['-3488128144981237669'] },
    { tokens: [1, 2, 3, 4, 5], page: 4, want: ['-3488128144981237669', '-3787494577174227566'] },
    {
      tokens: [10, 20, 30, 40, 50, 60, 70, 80],
      page: 2,
      want: ['978178666101069530', '-895308556211281782', '-8033692805846017938', '835415944263129316'],
    },
  ])('tokens $tokens, page $page', ({ tokens, page, want }) => {
    expect(sglangPageHashes(tokens, page).map(String)).toEqual(want);
  });
});

describe('tokenize', () => {
  it('is deterministic and about four characters per token on English prose', () => {
    const text =
      'You are a helpful assistant for an operations team. Answer concisely, cite the runbook section, ' +
      'and never guess a configuration value you have not been given. When in doubt, ask for the logs.';
    expect(tokenize(text)).toEqual(tokenize(text));
    const ratio = text.length / tokenize(text).length;
    expect(ratio).toBeGreaterThan(3);
    expect(ratio).toBeLessThan(5);
    expect(countTokens(text)).toBe(tokenize(text).length);
  });

  it('keeps every character: pieces join back to the text', () => {
    const text = '  Hello,   wörld!\n\tnew-line; ünïcode 12345 ';
    expect(pieces(text).join('')).toBe(text);
  });

  it('tokenizes a prompt followed by a reply the same as the reply appended later', () => {
    const prompt = renderChat([{ role: 'user', content: 'What is KV caching?' }]);
    const reply = 'the kv cache is fast ';
    expect(tokenize(prompt + reply)).toEqual([...tokenize(prompt), ...tokenize(reply)]);
  });
});

describe('renderChat', () => {
  it('makes the previous turn a prefix of the next', () => {
    const turn1 = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ];
    const p1 = renderChat(turn1);
    const p2 = renderChat([...turn1, { role: 'assistant', content: 'hello there ' }, { role: 'user', content: 'again' }]);
    expect(p2.startsWith(`${p1}hello there `)).toBe(true);
  });

  it('reads text parts of array content and ignores the rest', () => {
    expect(renderChat([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url' }, { type: 'text', text: 'b' }] }])).toBe(
      renderChat([{ role: 'user', content: 'ab' }]),
    );
  });
});

describe('blockHashes', () => {
  const tokens = Array.from({ length: 100 }, (_, i) => (i * 2654435761) >>> 0);

  it('hashes full blocks only, and a shared prefix gives shared leading hashes', () => {
    const a = blockHashes(tokens, 16);
    expect(a).toHaveLength(6);
    const b = blockHashes([...tokens.slice(0, 40), 7, 7, 7, ...tokens.slice(43)], 16);
    expect(b.slice(0, 2)).toEqual(a.slice(0, 2));
    // Block 2 holds the change; every later block differs because the chain covers it.
    for (let i = 2; i < 6; i++) expect(b[i]).not.toBe(a[i]);
  });

  it('depends on position: the same block content under a different prefix hashes differently', () => {
    const block = tokens.slice(0, 16);
    const x = blockHashes([...block, ...block], 16);
    expect(x[0]).not.toBe(x[1]);
  });

  it('returns safe integers, and honours the block limit', () => {
    for (const h of blockHashes(tokens, 4)) expect(Number.isSafeInteger(h)).toBe(true);
    expect(blockHashes(tokens, 4, 3)).toEqual(blockHashes(tokens, 4).slice(0, 3));
  });
});

describe('text keys', () => {
  const chats = [
    [{ role: 'user', content: 'What is KV caching?' }],
    [
      { role: 'system', content: 'Runbook. '.repeat(500) },
      { role: 'user', content: 'état — 状態 — 🙂 '.repeat(40) },
    ],
    [
      {
        role: 'user',
        content: [{ type: 'text', text: 'part one, ' }, { type: 'image_url' }, { type: 'text', text: 'part two '.repeat(30) }],
      },
    ],
    [
      { role: 'system', content: '' },
      { role: 'user', content: 'x'.repeat(63) },
    ],
  ];

  it.each(chats.map((c, i) => [i, c] as const))(
    'chat %i: keyed part by part exactly as its rendered text, with its length',
    (_, messages) => {
      const text = renderChat(messages);
      expect(chatBlockHashes(messages, 64)).toEqual({ hashes: textBlockHashes(text, 64), chars: text.length });
      expect(renderedChatChars(messages)).toBe(text.length);
    },
  );

  it('keys UTF-8 bytes in whole chunks: a text prefix gives the leading hashes, the partial tail none', () => {
    const long = 'déjà vu — 既視感 '.repeat(200);
    const bytes = Buffer.byteLength(long);
    const all = textBlockHashes(long, 64);
    expect(all).toHaveLength(Math.floor(bytes / 64));
    const prefix = long.slice(0, 1000);
    const some = textBlockHashes(prefix, 64);
    expect(some).toHaveLength(Math.floor(Buffer.byteLength(prefix) / 64));
    expect(all.slice(0, some.length)).toEqual(some);
    expect(textBlockHashes('x'.repeat(63), 64)).toEqual([]);
  });

  it('one changed byte, in any of the four lanes of any block, changes that block and every later one, and only those', () => {
    const base = 'The quick brown fox jumps over the lazy dog. '.repeat(20); // 900 bytes: 14 blocks of 64
    const reference = textBlockHashes(base, 64);
    for (const at of [0, 1, 4, 5, 10, 15, 63, 64, 200, 447, 895]) {
      const changed = base.slice(0, at) + (base[at] === 'X' ? 'Y' : 'X') + base.slice(at + 1);
      const hashes = textBlockHashes(changed, 64);
      const block = Math.floor(at / 64);
      expect(hashes.slice(0, block)).toEqual(reference.slice(0, block));
      for (let b = block; b < reference.length; b++) expect(hashes[b]).not.toBe(reference[b]);
    }
  });

  it('chunks whose word count is not a multiple of four (an odd --block-size) key every byte too', () => {
    const base = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(10); // 360 bytes: 18 blocks of 20
    const reference = textBlockHashes(base, 20);
    expect(reference).toHaveLength(18);
    for (const at of [16, 17, 19, 39]) {
      const changed = base.slice(0, at) + '!' + base.slice(at + 1);
      expect(textBlockHashes(changed, 20)[Math.floor(at / 20)]).not.toBe(reference[Math.floor(at / 20)]);
    }
    expect(new Set(reference).size).toBe(18);
  });

  it('a long text after a short one, and a short after a long, key as on their own (the scratch area is reused, and let go after a huge one)', () => {
    const short = 'abc '.repeat(40);
    const long = 'lorem ipsum '.repeat(250_000);
    const alone = textBlockHashes(short, 64);
    textBlockHashes(long, 64);
    expect(textBlockHashes(short, 64)).toEqual(alone);
    expect(textBlockHashes(long, 64)).toHaveLength(Math.floor(long.length / 64));
  });
});
