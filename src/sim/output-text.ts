import { fnv1a32 } from '../prefix/index.js';
import type { Rng } from './rng.js';

/**
 * Generated text is drawn from short words, each a single tokenizer piece followed by
 * one space, so that a reply re-tokenizes into exactly the tokens that produced it
 * when a client sends it back as history. That keeps multi-turn prefix hits honest.
 */
const WORDS = [
  'the',
  'a',
  'kv',
  'of',
  'to',
  'and',
  'in',
  'is',
  'that',
  'for',
  'it',
  'with',
  'as',
  'on',
  'be',
  'at',
  'by',
  'this',
  'from',
  'or',
  'an',
  'are',
  'not',
  'can',
  'will',
  'more',
  'some',
  'time',
  'load',
  'fast',
  'node',
  'data',
  'byte',
  'word',
  'next',
  'page',
  'hit',
  'miss',
  'fleet',
  'queue',
  'cache',
  'token',
].filter((w) => w.length <= 4);

const PIECES = WORDS.map((w) => `${w} `);
const IDS = PIECES.map((p) => fnv1a32(p));

export interface OutputToken {
  piece: string;
  id: number;
}

export function nextOutputToken(rng: Rng): OutputToken {
  const i = nextOutputWord(rng);
  return { piece: PIECES[i]!, id: IDS[i]! };
}

/**
 * The next generated word as a number (the same draw as nextOutputToken): the engine's
 * decode loop reads its piece and id from it, with no object a token.
 */
export function nextOutputWord(rng: Rng): number {
  return rng.int(PIECES.length);
}

export function outputWordPiece(word: number): string {
  return PIECES[word]!;
}

export function outputWordId(word: number): number {
  return IDS[word]!;
}
