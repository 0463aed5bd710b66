/**
 * A deterministic stand-in for a real tokenizer, shared by the simulated engines and
 * the router so that both cut the same prompt into the same tokens.
 *
 * Pieces are runs of at most four word characters, or one punctuation mark, each
 * with the whitespace that follows it; leading whitespace is a piece of its own.
 * English prose comes out at roughly four characters per token, the rule of thumb
 * real tokenizers and the GIE/llm-d scorers use. Token ids are FNV-1a (32-bit) of
 * the piece, so the same text always yields the same ids.
 *
 * Re-tokenizing generated text appended to a prompt gives the same pieces as the
 * generation produced, as long as the prompt ends in whitespace or punctuation, which
 * the chat renderer guarantees. That is what lets multi-turn prefixes hit the cache.
 */
const PIECE = /\s+|[\p{L}\p{N}_]{1,4}\s*|[^\s\p{L}\p{N}_]\s*/gu;

export function tokenize(text: string): number[] {
  const ids: number[] = [];
  PIECE.lastIndex = 0;
  for (let m = PIECE.exec(text); m !== null; m = PIECE.exec(text)) {
    ids.push(fnv1a32(m[0]));
  }
  return ids;
}

/** Split into the same pieces as tokenize(), keeping the text (for generated output). */
export function pieces(text: string): string[] {
  return text.match(PIECE) ?? [];
}

/** Token count without materialising ids: the router's cheap input estimate. */
export function countTokens(text: string): number {
  let n = 0;
  PIECE.lastIndex = 0;
  while (PIECE.exec(text) !== null) n++;
  return n;
}

export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
