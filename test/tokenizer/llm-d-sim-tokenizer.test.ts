import { describe, expect, it } from 'vitest';
import { LlmdSimTokenizer, loadChatTokenizer, LLM_D_SIM_TOKENIZER, renderLlmdSimChat } from '../../src/tokenizer/index.js';

/**
 * llm-d-inference-sim's stand-in tokenizer. The ids below were read from the real
 * engine's /tokenize (v0.10.2, --force-dummy-tokenizer); test/peers/llm-d-sim.test.ts
 * compares against the running engine on a wider corpus.
 */
describe('LlmdSimTokenizer', () => {
  const tok = new LlmdSimTokenizer();

  it.each([
    ['snake_case -x Ünï 🚀 a.b', [2212948000, 671913016, 23262949, 3943445553, 3826002220, 722245873, 3876335077]],
    ['Hello, world! How are you?', [4116459851, 2312110321, 933488787, 2344826916, 4097122423, 3692005271, 1354289308, 973910158]],
    ['', []],
  ])('encodes %j as the engine does', (text, ids) => {
    expect(tok.encodeText(text)).toEqual(ids);
  });

  it('renders a chat as the engine does: "### role(tool_call_id): content\\n" per message', () => {
    const messages = [
      { role: 'user', content: 'Hi' },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ];
    expect(renderLlmdSimChat(messages)).toBe('### user: Hi\n### tool(c1): ok\n');
    expect(tok.keyChat(messages)).toEqual([
      638357778, 638357778, 399020470, 1618501362, 2382766391, 1197285648, 638357778, 638357778, 399020470, 1366625991, 755801111,
      2284445657, 739023492, 2382766391, 2301860031,
    ]);
  });

  it.each([
    [
      'text parts joined by a new line',
      [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
      'a\nb',
    ],
    ['an image part as its URL', [{ type: 'image_url', image_url: { url: 'http://x/y.png' } }], 'image: http://x/y.png'],
    [
      'parts it does not render dropped',
      [
        { type: 'input_audio', input_audio: { data: 'AAAA' } },
        { type: 'text', text: 't' },
      ],
      't',
    ],
    ['no content', null, ''],
  ])('renders content: %s', (_, content, text) => {
    expect(renderLlmdSimChat([{ role: 'user', content }])).toBe(`### user: ${text}\n`);
  });

  it('writes tool calls after the content, as [name(arguments)]', () => {
    const m = { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] };
    expect(renderLlmdSimChat([m])).toBe('### assistant: [f({"a":1})]\n');
  });

  it('is what --tokenizer llm-d-inference-sim:dummy loads', () => {
    expect(loadChatTokenizer(LLM_D_SIM_TOKENIZER)).toBeInstanceOf(LlmdSimTokenizer);
  });
});
