import { countTokens } from '../prefix/index.js';
import { Rng } from '../sim/index.js';

export const WORDS = (
  'cluster node queue cache prefix token latency request engine batch prefill decode schedule memory block evict ' +
  'policy router worker fleet load sample fresh gate limit floor divert affinity owner replica shard stream metric ' +
  'alert budget window burst session context history system prompt reply answer operator runbook incident'
).split(' ');

/** Filler that is exactly one token under the shared tokenizer (≤ 4 letters plus a space). */
const ONE_TOKEN = 'ok ';

export function sentence(rng: Rng, words: number): string {
  let s = '';
  for (let i = 0; i < words; i++) s += `${WORDS[rng.int(WORDS.length)]}${i === words - 1 ? '. ' : ' '}`;
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * A family's system prompt: deterministic text of exactly `tokens` tokens (or the
 * header alone when that is longer). Exact, so the family sizes an operator asks for
 * are the sizes the engines see.
 *
 * Pieces of the shared tokenizer carry their trailing whitespace, so counts add up
 * across word boundaries and the text can be grown word by word without recounting.
 */
export function systemPrompt(seed: number, family: number, tokens: number): string {
  const rng = new Rng(seed * 1009 + family * 7919 + 1);
  return grow(rng, `You are assistant #${family} for the operations team of fleet ${family}. Follow the runbook below.\n`, tokens);
}

/**
 * A pasted document (a log, a file, retrieved passages) of exactly `tokens` tokens, or
 * the header alone when that is longer, drawn from `rng`. Every one is new text, so
 * no engine has any of it cached: it is prefill work wherever it goes.
 */
export function pastedDocument(rng: Rng, tokens: number): string {
  return grow(rng, 'Here is the document:\n', tokens);
}

/** `header` followed by sentences of filler words, grown word by word to exactly `tokens` tokens. */
function grow(rng: Rng, header: string, tokens: number): string {
  let text = header;
  let count = countTokens(text);
  let wordsLeft = 0;
  while (count < tokens) {
    if (wordsLeft === 0) wordsLeft = 8 + rng.int(10);
    wordsLeft--;
    let word = `${WORDS[rng.int(WORDS.length)]}${wordsLeft === 0 ? '. ' : ' '}`;
    let n = countTokens(word);
    if (count + n > tokens) {
      word = ONE_TOKEN;
      n = 1;
    }
    text += word;
    count += n;
  }
  return text;
}
